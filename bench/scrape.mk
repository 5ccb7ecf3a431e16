# bench-scrape: memprof serve's /metrics over a growing number of
# processes, in parallel and one by one: wall time, the thread stop each
# process pays, the agent's CPU per process, and the capacity per 15 s.
BENCH_TARGETS += bench-scrape
.PHONY: bench-scrape
bench-scrape: $(BUILD)/memprof targets
	MEMPROF=$(CURDIR)/$(BUILD)/memprof TARGETS=$(CURDIR)/$(TARGET_DIR) bash bench/scrape.sh
