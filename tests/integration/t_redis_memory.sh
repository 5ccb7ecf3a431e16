# stats, memory, purge, decay and recent on Debian's redis-server (its shared
# jemalloc) under redis-benchmark (issue 8): every command answers, the
# benchmark sees no error, redis still answers PING, nothing is left
# stopped, traced or mapped.
. "$SRCDIR/tests/integration/lib.sh"

start_redis
anon_code() { awk '$5 == 0 && $2 ~ /^r.x|^r--/ && NF == 5' "/proc/$PID/maps" | wc -l; }
before=$(anon_code)

redis-benchmark -p "$port" -q -n 40000 -d 1000 >"$WORK/bench.out" 2>&1 &
BENCH=$!
for i in 1 2 3; do
    printf '%s\n' 'stats' 'stats --summary --json' 'stats --json' 'memory --maps' \
        'memory --json' 'purge' 'purge 0 --json' 'decay' 'decay --json' \
        'recent on 100' 'recent' 'recent --live --older-than 1s --json'
done >"$WORK/script"
echo 'recent off' >>"$WORK/script"
mp -p "$PID" -x "$WORK/script"
check "every command ran" [ "$RC" -eq 0 ]
check "stats --json said its size and agreed" grep -q "captured [0-9]* bytes of jemalloc's statistics.*agrees with mallctl" <<<"$ERR"
check "memory shows redis's RSS" grep -Eq '^RSS +[0-9.]+ MiB' <<<"$OUT"
check "purge said how much came back" grep -Eq 'MiB came back to the system' <<<"$OUT"
check "recent listed redis's record" grep -Eq '^[0-9]+ recent sampled allocations kept' <<<"$OUT"
check "recent off put alloc_max back" grep -q 'alloc_max is 0 again' <<<"$OUT"
check "stats showed the size classes" grep -Eq '^small +[0-9]+ +[0-9]+ +[0-9]+$' <<<"$OUT"
wait "$BENCH"
check "redis-benchmark succeeded" [ $? -eq 0 ]
check "no benchmark errors" sh -c "! grep -qi error '$WORK/bench.out'"
check "redis answers PING" sh -c "redis-cli -p $port ping | grep -q PONG"
check "no capture buffer left in redis" [ "$(anon_code)" -eq "$before" ]
check "redis untouched" assert_untouched "$PID"
