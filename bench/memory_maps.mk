# bench-memory-maps: what 'memory' (where RSS is and the diagnoses) costs
# on a process with 10,000 mappings, against pmap -X and an awk over smaps,
# measured in the same run.
BENCH_TARGETS += bench-memory-maps
.PHONY: bench-memory-maps

$(BUILD)/bench/many_maps: bench/many_maps.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -o $@ $<

bench-memory-maps: $(BUILD)/memprof $(BUILD)/bench/many_maps
	MEMPROF=$(CURDIR)/$(BUILD)/memprof MANY_MAPS=$(CURDIR)/$(BUILD)/bench/many_maps \
	  bash bench/memory_maps.sh
