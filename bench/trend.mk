# bench-trend: memprof trend over 720 synthetic dumps of a 14k-stack
# process with one steady leak: time and peak RSS, jeprof on one dump.
BENCH_TARGETS += bench-trend
.PHONY: bench-trend

bench-trend: $(BUILD)/memprof $(BUILD)/bench/gen_stacks
	MEMPROF=$(CURDIR)/$(BUILD)/memprof GEN=$(CURDIR)/$(BUILD)/bench/gen_stacks \
	  bash bench/trend.sh
