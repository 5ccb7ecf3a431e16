# bench-fork: a session's stops per second against a process forking in a
# loop, beside the same load without forks and an idle process, and gdb.
BENCH_TARGETS += bench-fork
.PHONY: bench-fork
bench-fork: $(BUILD)/memprof targets
	MEMPROF=$(CURDIR)/$(BUILD)/memprof TARGETS=$(CURDIR)/$(TARGET_DIR) bash bench/fork.sh
