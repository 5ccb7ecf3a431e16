# bench-analysis: memprof top against jeprof --text on generated heap
# profiles of about 15k and 250k stacks: time, peak RSS, totals.
BENCH_TARGETS += bench-analysis
.PHONY: bench-analysis

$(BUILD)/bench/gen_stacks: bench/gen_stacks.c
	@mkdir -p $(dir $@)
	$(CC) $(TARGET_CFLAGS) -o $@ $< -Wl,--no-as-needed $(JEMALLOC_LIBS)

bench-analysis: $(BUILD)/memprof $(BUILD)/bench/gen_stacks
	MEMPROF=$(CURDIR)/$(BUILD)/memprof GEN=$(CURDIR)/$(BUILD)/bench/gen_stacks \
	  bash bench/analysis.sh
