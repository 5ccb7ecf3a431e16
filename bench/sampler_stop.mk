# bench-sampler-stop: the stop that puts memprof's heap sampler into a
# process, idle and with every CPU busy, and its phases.
BENCH_TARGETS += bench-sampler-stop
.PHONY: bench-sampler-stop
bench-sampler-stop: $(BUILD)/memprof targets
	MEMPROF=$(CURDIR)/$(BUILD)/memprof TARGETS=$(CURDIR)/$(TARGET_DIR) bash bench/sampler_stop.sh
