# bench-pause: how long memprof's one stopped thread pauses per prof on/off,
# and how long the target's other threads stop, against gdb's infcall.
BENCH_TARGETS += bench-pause
.PHONY: bench-pause
bench-pause: $(BUILD)/memprof targets
	MEMPROF=$(CURDIR)/$(BUILD)/memprof TARGETS=$(CURDIR)/$(TARGET_DIR) bash bench/pause.sh
