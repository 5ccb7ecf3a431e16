# Debian's Apache 2.4 (mpm_event) with memprof's sampler in its worker
# process while 400 connections each hold a request with 6 KB of headers
# unfinished: that memory comes from APR's pools, whose allocator maps its
# blocks with mmap() in Debian's build, never through malloc().  The
# sampler follows libapr's mmap (docs/sampler.md, Mappings): the dump has
# those blocks as mappings, under the marker root, through APR's
# functions, at least the headers' bytes; the dump's note says where APR's
# memory shows; the memory figures confirm the fact the note states (the
# anonymous memory beyond malloc's heap grows by the connections' headers,
# malloc's in-use bytes do not); the agent's pprof carries the same
# sentence; Apache serves afterwards.
. "$SRCDIR/tests/integration/lib.sh"

start_apache 450
one_child() { [ "$(pgrep -c -P "$APACHE")" -eq 1 ]; }
wait_until 20 "apache2's one worker process" one_child
PID=$(pgrep -P "$APACHE")
check "the worker process uses glibc malloc and maps APR" \
    sh -c "grep -q 'libapr-1.so' /proc/$PID/maps && grep -q 'libc.so' /proc/$PID/maps"

mp -p "$PID" -e 'memory --json'
before_anon=$(jf 'd["anonymous_not_allocator"]')
anon_kb() { awk '/^Anonymous:/ {print $2}' "/proc/$PID/smaps_rollup"; }
before_anon_kb=$(anon_kb)
before_inuse=$(jf 'd["allocator"]["in_use"]')

open_session apache
echo 'prof sample 12' >&3
echo 'prof on' >&3
in_sampler() { [ "$(got_into_sampler "$PID" 2>/dev/null)" -gt 0 ] 2>/dev/null; }
wait_until 30 "the sampler to be in apache2's worker" in_sampler

# (not holding the session's command FIFO: fd 3 closed for it)
python3 "$SRCDIR/tests/integration/hold_headers.py" "$APACHE_PORT" 400 300 \
    >"$WORK/hold.out" 2>&1 3>&- &
HOLD=$!
PIDS+=("$HOLD")
wait_until 60 "400 connections holding unfinished headers" grep -q '^held 400' "$WORK/hold.out"
established() { [ "$(ss -Htn state established "( sport = :$APACHE_PORT )" | wc -l)" -ge 400 ]; }
wait_until 20 "apache2 to hold the 400 connections" established
# every connection's headers read into its pool
read_in() {
    mp -p "$PID" -e 'memory --json' 2>/dev/null
    [ "$RC" = 0 ] || return 1
    local grown
    grown=$(jf "d['anonymous_not_allocator'] - $before_anon")
    [ "$grown" -ge $((400 * 6 * 1024)) ]
}
# the headers read into the pools (read from outside: no second session)
wait_until 30 "the worker's anonymous memory to grow by 400 x 6 KB" \
    [ "$(( $(anon_kb) - before_anon_kb ))" -ge 2400 ]
echo "dump $WORK/a1.heap" >&3
echo 'prof off' >&3
close_session
ERR=$(cat "$WORK/apache.out")
check "the dump says where APR's pools' memory shows" \
    err_has "note: process $PID maps APR \(libapr-1\.so\.0[^)]*\): APR's pools take their memory from APR's allocator, which maps its blocks with mmap\(\) rather than malloc\(\)"
check "and names Apache's connections and requests, as mappings" \
    err_has "in Apache: its connections, requests and their headers\) is in memprof's sampler's profiles as mappings, under '\[mapped: mmap/mremap/brk\]'"
mp "$WORK/a1.heap" -e 'top --cum --json 80'
mapped=$(jf "sum(r['cum_bytes'] for r in d['rows'] if r['function'] == '[mapped: mmap/mremap/brk]')")
echo "mapped: $mapped bytes"
check "the dump has APR's blocks as mappings: at least the 400 x 6 KB of headers (got $mapped)" \
    [ "$mapped" -ge $((400 * 6 * 1024)) ]
mp "$WORK/a1.heap" -e 'traces 80'
printf '%s\n' "$OUT" >"$WORK/traces"
check "a mapping stack goes through APR's functions" \
    awk '/^-+\+/ {a = 0} /\| apr_/ {a = 1} a && /\[mapped: mmap\/mremap\/brk\]/ {ok = 1} END {exit !ok}' "$WORK/traces"

# The fact behind the note, measured: while the 400 requests are held,
# the anonymous memory outside malloc's heap grew by at least their
# headers (400 x 6 KB), malloc's in-use bytes by far less.
wait_until 30 "the worker's anonymous memory beyond malloc to grow by 400 x 6 KB" read_in
check "malloc's in-use bytes grew by less than a third of the headers" \
    [ "$(jf "d['allocator']['in_use'] - $before_inuse")" -lt $((400 * 2 * 1024)) ]

# The agent's sampler run: its profile carries the same sentence.
start_serve --allow-control
http POST "/debug/pprof/heap?pid=$PID&seconds=1"
comment_says_apr() {
    [ "$STATUS" = 200 ] &&
    zcat "$WORK/body" | protoc --proto_path="$SRCDIR/lib/profile" \
        --decode=perftools.profiles.Profile "$SRCDIR/lib/profile/pprof.proto" >"$WORK/ap.txt" &&
    idx=$(awk '/^comment:/ {print $2}' "$WORK/ap.txt") && [ -n "$idx" ] &&
    grep '^string_table:' "$WORK/ap.txt" | sed -n "$((idx + 1))p" | grep -q 'maps APR (libapr-1.so'
}
check "serve: the sampler run's pprof comment names APR's mmap'd pools" comment_says_apr

kill "$HOLD"
wait "$HOLD" 2>/dev/null
check "apache2 still serves its page" apache_up
check "no call-table slot of the worker points into the sampler" [ "$(got_into_sampler "$PID")" = 0 ]
check "the worker is untraced" untraced "$PID"
