# bench-sampler: what memprof's heap sampler costs a process (allocation
# pairs in a loop; redis-server under redis-benchmark) against no sampler
# and against heaptrack attached at run time, measured in the same run.
BENCH_TARGETS += bench-sampler
.PHONY: bench-sampler

$(BUILD)/bench/alloc_loop: bench/alloc_loop.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -D_GNU_SOURCE -O2 -fomit-frame-pointer -Wall -Wextra -Werror -o $@ $<

bench-sampler: $(BUILD)/memprof $(BUILD)/bench/alloc_loop
	MEMPROF=$(CURDIR)/$(BUILD)/memprof LOOP=$(CURDIR)/$(BUILD)/bench/alloc_loop \
	  bash bench/sampler.sh
