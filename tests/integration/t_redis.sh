# Debian's redis-server (its own jemalloc, started with profiling
# available but off) under redis-benchmark while memprof toggles
# profiling and dumps: the benchmark runs across the whole session (redis
# processed commands before the first stop, between the stops and after
# the last), with no errors; PING still answers, the dump is a heap_v2
# profile, nothing left stopped, traced or on disk.
. "$SRCDIR/tests/integration/lib.sh"

start_redis
pongs() { redis-cli -p "$port" ping 2>/dev/null | grep -q PONG; }

# redis's own count of the commands it has run, but for the INFO that asks
# (INFO commandstats: cmdstat_NAME:calls=N,...)
commands() {
    redis-cli -p "$port" info commandstats |
        awk -F'[:,=]' '/^cmdstat_/ && $1 != "cmdstat_info" { n += $3 } END { print n + 0 }'
}
commands_above() { [ "$(commands)" -gt "$1" ]; }
# -l: the benchmark loops until stopped, so it outlasts the session
redis-benchmark -p "$port" -q -n 20000 -l >"$WORK/bench.out" 2>&1 &
BENCH=$!
PIDS+=("$BENCH")
start=$(commands)
wait_until 10 "the benchmark to get going" commands_above $((start + 1000))

toggles 30
first=$(commands)
mp -p "$PID" -x "$WORK/toggles" -e "dump $WORK/redis.heap"
check "memprof ran 30 rounds and the dump" mp_ok
last=$(commands)
echo "redis commands: $first before the first stop, $last after the last"
check "redis ran commands between the first and the last stop" [ "$last" -gt "$first" ]
check "the benchmark outlived the session" alive "$BENCH"
check "redis goes on running commands after the last stop" within 5 commands_above "$last"
kill "$BENCH"; wait "$BENCH" 2>/dev/null
check "no benchmark errors" file_lacks "$WORK/bench.out" '[Ee][Rr][Rr][Oo][Rr]'
check "redis still answers PING" pongs
check "the dump is a heap_v2 profile" is_heap_profile "$WORK/redis.heap"
check "redis is left running, untraced" untouched "$PID"
check "no dump directory left" no_dump_dirs
