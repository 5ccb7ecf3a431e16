# bench-servers: the thread held per stats summary and per dump, and each
# stop's pre-call check, on Debian's clickhouse-server and redis-server.
BENCH_TARGETS += bench-servers
.PHONY: bench-servers
bench-servers: $(BUILD)/memprof
	MEMPROF=$(CURDIR)/$(BUILD)/memprof bash bench/servers.sh
