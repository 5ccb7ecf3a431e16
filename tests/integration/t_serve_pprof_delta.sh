# memprof serve's ?seconds=N on GET /debug/pprof/heap and allocs, as Go's
# net/http/pprof: the difference of two profiles of the process's own
# profiler N seconds apart, read by Debian's go tool pprof from the URL.  A
# jemalloc process (prof:true, prof_accum) kept 8 MiB in early_alloc before
# the window and keeps 8 MiB in window_alloc inside it: the delta names
# window_alloc and not early_alloc, in use and allocated, with the window
# as its duration.  The process runs free between the two dumps (it
# allocates then); another request for it meanwhile is 503, a bad seconds
# 400, a process without its own profiler 409; nothing is left behind.
. "$SRCDIR/tests/integration/lib.sh"

CONF=prof:true,prof_accum:true,lg_prof_sample:10 start_target delta_window
DW=$PID
DW_OUT=$TARGET_OUT
CONF= start_target glibc_live
GL=$PID
start_serve
export HOME=$WORK GOPATH=$WORK/go GOCACHE=$WORK/gocache GOFLAGS=-mod=mod

# The worker keeps each dump it takes in its spool directory ($TMPDIR, the
# agent's): the first one there means the window has begun.
dumps_taken() { compgen -G "$TMPDIR/memprof-dumps.*/$1.heap.z" >/dev/null; }
# delta ENDPOINT N OUT: go tool pprof -top of ENDPOINT?seconds=N, with one
# SIGUSR1 (window_alloc's 8 MiB) sent inside the window; the signal's
# count in $SIGNALS.
SIGNALS=0
delta() {
    go tool pprof -top "$SERVE_URL/debug/pprof/$1?pid=$DW&seconds=$2" >"$WORK/$3" 2>"$WORK/$3.err" &
    local got=$!
    wait_until 20 "the window's first dump" dumps_taken 1
    SIGNALS=$((SIGNALS + 1))
    kill -USR1 "$DW"
    wait_until 20 "window_alloc's blocks" grep -q "^allocated $SIGNALS$" "$DW_OUT"
    # The window is the process's own: while it lasts, the process is the
    # worker's, and another request is told so at once.
    [ "$1" = heap ] && http GET "/debug/pprof/heap?pid=$DW"
    wait "$got"
    cat "$WORK/$3.err" >&2
}

delta heap 5 heap.top
check "meanwhile another request for the process: 503, not waited on" status_is 503
check "go tool pprof reads heap?seconds=5: a top naming window_alloc" grep -Eq ' window_alloc$' "$WORK/heap.top"
check "window_alloc's 8 MiB in use (cumulative)" grep -Eq ' 8MB +100% +window_alloc$' "$WORK/heap.top"
check "not early_alloc, whose blocks were kept before the window" sh -c "! grep -q early_alloc '$WORK/heap.top'"
check "its type is inuse_space" grep -q '^Type: inuse_space' "$WORK/heap.top"
check "its duration is the window's" grep -Eq '^Duration: ([5-9]|[1-9][0-9])' "$WORK/heap.top"

delta allocs 3 allocs.top
check "allocs?seconds=3: alloc_space, the default with prof_accum" grep -q '^Type: alloc_space' "$WORK/allocs.top"
check "allocs delta names window_alloc (8 MiB allocated in the window)" grep -Eq ' 8MB +100% +window_alloc$' "$WORK/allocs.top"
check "and not early_alloc" sh -c "! grep -q early_alloc '$WORK/allocs.top'"

http GET "/debug/pprof/heap?pid=$DW&seconds=0"
check "seconds=0: 400" status_is 400
check "saying the range" body_has 'seconds must be given once, as a whole number from 1 to 600'
http GET "/debug/pprof/heap?pid=$DW&seconds=601"
check "seconds=601: 400" status_is 400
http GET "/debug/pprof/allocs?pid=$DW&seconds=1s"
check "seconds=1s: 400" status_is 400
http GET "/debug/pprof/heap?pid=$DW&seconds=1&seconds=2"
check "seconds twice: 400" status_is 400
http GET "/debug/pprof/heap?pid=$GL&seconds=1"
check "a glibc process (no profiler of its own): 409" status_is 409
check "saying a profile needs the sampler, by POST" body_has 'POST /debug/pprof/heap\?pid=[0-9]+&seconds=N'

check "the jemalloc process is untouched" untouched "$DW"
check "the glibc process is untouched" untouched "$GL"
check "no spool directory left" sh -c "! compgen -G '$TMPDIR/memprof-dumps.*' >/dev/null"
check "the agent is alive" alive "$SERVE_PID"
