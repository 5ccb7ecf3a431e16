# memprof's heap sampler in real Debian servers and in tcmalloc:
#  - redis-server started plainly (Debian's links jemalloc, opt.prof false),
#    under redis-benchmark: 'prof on' puts the sampler in, the load runs
#    with 0 errors, the dump names redis's allocating functions, 'prof off'
#    and redis still answers;
#  - nginx (glibc malloc), both workers sampled while curl asks for pages
#    over keep-alive connections: the profiles name nginx's allocators,
#    every request succeeds, nginx still serves after 'prof off';
#  - gperftools tcmalloc (glibc_live linked with -ltcmalloc): the sampler
#    stands in for tcmalloc's malloc and the dump names keep_malloc.
. "$SRCDIR/tests/integration/lib.sh"

send() {   # send SESSION CMD RE: one more line matching RE than before
    local n
    n=$(grep -Ec -- "$3" "$WORK/$1.out" 2>/dev/null)
    echo "$2" >&3
    wait_until 30 "session $1 to answer '$2'" count_above "$WORK/$1.out" "$3" "${n:-0}"
}
fns_of() { mp "$1" -e 'top --json 60'; jf "' '.join(r['function'] for r in d['rows'])"; }

# --- redis, no prof:true ------------------------------------------------------
port=$(free_port)
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$WORK" >"$WORK/redis.log" 2>&1 &
PID=$!
PIDS+=("$PID")
wait_until 10 "redis answers PING" sh -c "redis-cli -p $port ping 2>/dev/null | grep -q PONG"
mp -p "$PID" -e 'info --json'
check "redis: jemalloc's own profiler is off for good (opt.prof false)" [ "$(jf 'd["mallctl"]["opt.prof"]')" = False ]
check "redis: memprof says 'prof on' will use its sampler" err_has "'prof on' puts memprof's heap sampler in instead"
check "redis: info --json gives allocator.sampler as it does for glibc" \
    [ "$(jf '"sampler" in d["allocator"]')" = True ]
open_session redis
send redis 'prof sample 14' 'sampling every'
send redis 'prof on' 'profiling is now on|error|prof:'
check "redis: the sampler went in" file_has "$WORK/redis.out" "memprof's sampler is in process $PID"
redis-benchmark -p "$port" -q -n 20000 -c 8 -r 50000 -d 200 -t set,lpush,sadd >"$WORK/bench.out" 2>&1
bench_rc=$?
cat "$WORK/bench.out" >&2
check "redis: redis-benchmark succeeded" [ "$bench_rc" = 0 ]
check "redis: no errors from the load" file_lacks "$WORK/bench.out" -i 'error'
check "redis: every test reported requests per second" [ "$(grep -c 'requests per second' "$WORK/bench.out")" = 3 ]
send redis "dump $WORK/redis.heap" '^dump1: [0-9]+ stacks'
fns=$(fns_of "$WORK/redis.heap")
echo "redis functions: $fns"
check "redis: the profile names redis's allocators (zmalloc...)" grep -Eq 'zmalloc|ztrymalloc' <<<"$fns"
check "redis: and its callers (sdsnewlen, createStringObject, dictAdd...)" \
    grep -Eq 'sdsnewlen|createStringObject|dictAdd|listAddNode|quicklist|lpNew' <<<"$fns"
send redis 'prof off' 'profiling is now off'
check "redis: no GOT slot left pointing into the sampler" [ "$(got_into_sampler "$PID")" = 0 ]
close_session
check "redis: the session ended well" [ "$MPRC" = 0 ]
check "redis: still answers" sh -c "redis-cli -p $port set k v | grep -q OK && redis-cli -p $port get k | grep -q v"
check "redis: left untraced" untouched "$PID"

# --- nginx --------------------------------------------------------------------
start_nginx
workers=($(pgrep -P "$NGINX_MASTER" | sort -n))
# one session per worker, its commands on a FIFO held open on fd FDS[k]
# (both started before either FIFO is opened for writing: neither may
# inherit the other's write end, which would keep it from ever ending)
FDS=() MPS=()
for k in 0 1; do
    mkfifo "$WORK/ngx$k.cmds"
    "$MEMPROF" -p "${workers[$k]}" <"$WORK/ngx$k.cmds" >"$WORK/ngx$k.out" 2>&1 &
    MPS[$k]=$!
    PIDS+=("$!")       # cleanup ends it if the test dies first
done
for k in 0 1; do
    exec {f}>"$WORK/ngx$k.cmds"
    FDS[$k]=$f
done
nsend() {   # nsend K CMD RE (its output file may not exist yet: 0 lines)
    local n
    n=$(grep -Ec -- "$3" "$WORK/ngx$1.out" 2>/dev/null)
    echo "$2" >&"${FDS[$1]}"
    wait_until 30 "worker session $1 to answer '$2'" count_above "$WORK/ngx$1.out" "$3" "${n:-0}"
}
for k in 0 1; do
    nsend "$k" 'prof sample 0' 'sampling every'
    nsend "$k" 'prof on' 'profiling is now on|error'
    check "nginx worker $k: the sampler went in" file_has "$WORK/ngx$k.out" 'profiling is now on'
done
# 6 clients, 2000 requests each on one keep-alive connection
CURLS=()
for c in 1 2 3 4 5 6; do
    curl -s -o /dev/null -w '%{http_code}\n' "http://127.0.0.1:$NGINX_PORT/?c=$c&[1-2000]" >"$WORK/curl$c" 2>&1 &
    CURLS+=($!)
done
under_way() { [ "$(cat "$WORK"/curl? | grep -c '^200$')" -gt 600 ]; }
wait_until 30 "the clients to be under way" under_way
for k in 0 1; do
    nsend "$k" "dump $WORK/ngx$k.heap" '^dump1: [0-9]+ stacks'
done
wait "${CURLS[@]}"
check "nginx: all 12000 requests answered 200" [ "$(cat "$WORK"/curl? | grep -c '^200$')" = 12000 ]
fns="$(fns_of "$WORK/ngx0.heap") $(fns_of "$WORK/ngx1.heap")"
echo "nginx functions: $fns"
check "nginx: the profiles name nginx's allocators (ngx_alloc, ngx_memalign...)" \
    grep -Eq 'ngx_alloc|ngx_memalign|ngx_palloc|ngx_create_pool|ngx_calloc' <<<"$fns"
check "nginx: and the connection's pool from ngx_event_accept" grep -q ngx_event_accept <<<"$fns"
for k in 0 1; do
    nsend "$k" 'prof off' 'profiling is now off'
    f=${FDS[$k]}
    exec {f}>&-
    wait_until 20 "worker session $k to end" ended "${MPS[$k]}"
    check "nginx worker $k: the session ended without an error" file_lacks "$WORK/ngx$k.out" 'error|warning'

done
for w in "${workers[@]}"; do
    check "nginx worker $w: no GOT slot into the sampler" [ "$(got_into_sampler "$w")" = 0 ]
    check "nginx worker $w: left untraced" untouched "$w"
done
check "nginx: still serves" nginx_up

# --- tcmalloc -----------------------------------------------------------------
CONF= start_target tcmalloc_live
open_session tc
send tc 'prof sample 0' 'sampling every'
send tc 'prof on' 'profiling is now on|error|prof:'
check "tcmalloc: the sampler went in" file_has "$WORK/tc.out" 'profiling is now on'
kill -USR1 "$PID"
wait_until 20 "a round" grep -q '^round 1 done' "$TARGET_OUT"
send tc "dump $WORK/tc.heap" '^dump1: [0-9]+ stacks'
mp "$WORK/tc.heap" -e 'top --json 30'
check "tcmalloc: keep_malloc named, exactly (9830400 bytes, 200 objects)" \
    [ "$(jf "' '.join(str(r[k]) for r in d['rows'] if r['function'] == 'keep_malloc' for k in ('flat_bytes', 'flat_objects'))")" = "9830400 200" ]
check "tcmalloc: 2414 objects in all" [ "$(jf 'd["total_objects"]')" = 2414 ]
close_session
check "tcmalloc: session ended well" [ "$MPRC" = 0 ]
check "tcmalloc: no GOT slot into the sampler" [ "$(got_into_sampler "$PID")" = 0 ]
check "tcmalloc: left running, untraced" untouched "$PID"
