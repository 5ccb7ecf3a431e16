# bench-faults: what `faults` costs a process that does little but take
# page faults, against none and against perf record --call-graph dwarf,
# measured in the same run.
BENCH_TARGETS += bench-faults
.PHONY: bench-faults

$(BUILD)/bench/fault_loop: bench/fault_loop.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -D_GNU_SOURCE -O2 -fomit-frame-pointer -Wall -Wextra -Werror -o $@ $<

bench-faults: $(BUILD)/memprof $(BUILD)/bench/fault_loop
	MEMPROF=$(CURDIR)/$(BUILD)/memprof LOOP=$(CURDIR)/$(BUILD)/bench/fault_loop \
	  bash bench/faults.sh
