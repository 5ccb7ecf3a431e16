# Debian's redis-server (its own jemalloc, started with profiling
# available but off) under redis-benchmark while memprof toggles
# profiling and dumps: no benchmark errors, PING still answers, the dump
# is a heap_v2 profile, nothing left stopped, traced or on disk.
. "$SRCDIR/tests/integration/lib.sh"

start_redis

redis-benchmark -p "$port" -q -n 20000 >"$WORK/bench.out" 2>&1 &
BENCH=$!
toggles 30
mp -p "$PID" -x "$WORK/toggles" -e "dump $WORK/redis.heap"
assert_ok
wait "$BENCH" || die "redis-benchmark failed: $(tail -5 "$WORK/bench.out")"
grep -qi 'error' "$WORK/bench.out" && die "benchmark errors: $(grep -i error "$WORK/bench.out" | head -3)"
redis-cli -p "$port" ping | grep -q PONG || die "redis no longer answers PING"
head -c 8 "$WORK/redis.heap" | grep -q '^heap_v2/' || die "dump is not heap_v2: $(head -c 40 "$WORK/redis.heap")"
assert_untouched "$PID"
assert_no_dump_dirs
