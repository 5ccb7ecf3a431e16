# memprof's heap sampler in real Debian servers and in tcmalloc:
#  - redis-server started plainly (Debian's links jemalloc, opt.prof false),
#    under redis-benchmark: 'prof on' puts the sampler in, the load runs
#    with 0 errors, the dump names redis's allocating functions, 'prof off'
#    and redis still answers;
#  - nginx (glibc malloc), both workers sampled under wrk (8 keep-alive
#    connections, run until both dumps are taken, then ended by SIGINT):
#    wrk's report shows no socket error and no non-2xx response, every
#    answer was 200, the profiles name nginx's allocators and together
#    hold the 8 open connections' pools (from ngx_event_accept), nginx
#    still serves after 'prof off';
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
check "redis: memprof says 'prof on' will use its sampler, and why" \
    err_has "own heap profiling is off for good \\(opt\\.prof was false at start\\): 'prof on' puts memprof's heap sampler in instead"
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
# wrk's Lua hooks: each of its threads counts its answers and the ones
# that were not 200, and adds a line to the file named after '--' once it
# has had 500 answers (the load is under way: wrk itself prints nothing
# until it ends); done() prints the totals and wrk's error counters, which
# its own report leaves out when they are 0.
cat >"$WORK/wrk.lua" <<'EOF'
local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args) mark, answers, not200 = args[1], 0, 0 end
function response(status, headers, body)
    answers = answers + 1
    if status ~= 200 then not200 = not200 + 1 end
    if answers == 500 then
        local f = io.open(mark, "a"); f:write("under way\n"); f:close()
    end
end
function done(summary, latency, requests)
    local a, n = 0, 0
    for _, t in ipairs(threads) do a = a + t:get("answers"); n = n + t:get("not200") end
    local e = summary.errors
    io.write(string.format("lua: answers %d, not 200 %d, requests %d\n", a, n, summary.requests))
    io.write(string.format("lua: errors connect %d, read %d, write %d, timeout %d, status %d\n",
                           e.connect, e.read, e.write, e.timeout, e.status))
end
EOF
# The load: 2 threads, 8 keep-alive connections (nginx's 64 per worker
# hold them all even if one worker takes every one), for as long as the
# dumps take.  -d is only an upper bound: SIGINT ends wrk, which then
# reports on the time it ran.  Its SIGINT handler is set before it prints
# "Running" (stdbuf: line by line into the file); a latency beyond
# --timeout counts as an error, so it is far above any request's.
stdbuf -oL wrk -t2 -c8 -d300s --timeout 30s -s "$WORK/wrk.lua" \
    "http://127.0.0.1:$NGINX_PORT/" -- "$WORK/wrk.mark" >"$WORK/wrk.out" 2>&1 &
WRK=$!
PIDS+=("$WRK")
wrk_under_way() {
    grep -q '^Running' "$WORK/wrk.out" 2>/dev/null &&
        [ "$(grep -c 'under way' "$WORK/wrk.mark" 2>/dev/null)" = 2 ] && return 0
    alive "$WRK" || die "wrk ended before the dumps: $(cat "$WORK/wrk.out")"
    return 1
}
wait_until 30 "both of wrk's threads to have 500 answers" wrk_under_way
for k in 0 1; do
    nsend "$k" "dump $WORK/ngx$k.heap" '^dump1: [0-9]+ stacks'
done
check "nginx: wrk still ran as both dumps were taken" alive "$WRK"
kill -INT "$WRK"
wait "$WRK"
wrk_rc=$?
cat "$WORK/wrk.out" >&2
check "nginx: wrk ended well (exit 0)" [ "$wrk_rc" = 0 ]
check "nginx: wrk's report has its request count" file_has "$WORK/wrk.out" '^ +[0-9]+ requests in '
check "nginx: wrk's report shows no socket error" file_lacks "$WORK/wrk.out" 'Socket errors'
check "nginx: wrk's report shows no non-2xx response" file_lacks "$WORK/wrk.out" 'Non-2xx'
check "nginx: wrk's error counters are all 0" \
    file_has "$WORK/wrk.out" '^lua: errors connect 0, read 0, write 0, timeout 0, status 0$'
answers() {    # every request wrk counted was answered 200, at least 1000
    local a n r
    read -r a n r < <(sed -En 's/^lua: answers ([0-9]+), not 200 ([0-9]+), requests ([0-9]+)$/\1 \2 \3/p' "$WORK/wrk.out")
    [ -n "${a:-}" ] && [ "$a" -ge 1000 ] && [ "$n" = 0 ] && [ "$r" = "$a" ] && return 0
    echo "  answers ${a:-none}, not 200 ${n:-none}, requests ${r:-none}" >&2
    return 1
}
check "nginx: every answer wrk had was 200 (1000 at least)" answers
fns="$(fns_of "$WORK/ngx0.heap") $(fns_of "$WORK/ngx1.heap")"
echo "nginx functions: $fns"
check "nginx: the profiles name nginx's allocators (ngx_alloc, ngx_memalign...)" \
    grep -Eq 'ngx_alloc|ngx_memalign|ngx_palloc|ngx_create_pool|ngx_calloc' <<<"$fns"
# each of wrk's 8 connections holds the pool ngx_event_accept made for it
# (one posix_memalign) in the worker that took it, for as long as it is
# open: start_nginx keeps them open, so the two dumps together hold 8
accept_pools() { mp "$1" -e 'top --json 60 --cum'; jf "sum(r['cum_objects'] for r in d['rows'] if r['function'] == 'ngx_event_accept')"; }
p0=$(accept_pools "$WORK/ngx0.heap") p1=$(accept_pools "$WORK/ngx1.heap")
echo "connection pools: worker 0 ${p0:-none}, worker 1 ${p1:-none}"
check "nginx: the dumps hold the pools of wrk's 8 open connections, from ngx_event_accept" \
    [ "$(( ${p0:-0} + ${p1:-0} ))" = 8 ]
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
