# A thread parked in a restartable read() but with an unsafe frame on its
# stack (a signal handler; ld.so running a constructor under dlopen; a
# jemalloc extent hook under mallocx) ranks first (lowest tid, same rank as
# the helper): memprof must refuse it for the right reason, use the helper
# thread, count the refusal, and leave the parked thread to finish its read
# intact.  When every thread is unsafe memprof gives up with a clear
# message after bounded retries and changes nothing.
. "$SRCDIR/tests/integration/lib.sh"

MESSAGE='memprof-unsafe-frame-message'

release_and_finish() {   # FIFO: write the message, wait for the verdict
    printf '%s\n' "$MESSAGE" >"$1"
    for i in $(seq 100); do grep -q '^finished' "$TARGET_OUT" && break; sleep 0.1; done
    grep -q '^unsafe read ok' "$TARGET_OUT" || die "parked read: $(cat "$TARGET_OUT")"
    grep -q '^finished' "$TARGET_OUT" || die "main thread did not finish: $(cat "$TARGET_OUT")"
}

check_refused() {        # MODE WHY-REGEX [EXTRA-ARG]
    local mode=$1 why=$2 fifo="$WORK/fifo.$1"
    mkfifo "$fifo"
    start_target unsafe_frames "$mode" "$fifo" ${3:+"$3"}
    local helper
    helper=$(awk '/^helper/ {print $2}' "$TARGET_OUT")
    [ "$helper" -gt "$PID" ] || die "helper tid $helper is below $PID: main would not be tried first"
    MEMPROF_TRACE_PAUSES=1 mp -p "$PID" -e 'prof on' -e 'prof off' -e info
    assert_ok
    assert_out "^pauses .* last [0-9]+ us \(thread $helper\)"
    assert_out "; [1-9][0-9]* unsafe threads skipped"
    assert_err "^pause tid=$PID .* refused \($why"
    ! grep -Eq "^pause tid=$PID .* calls=[1-9]" <<<"$ERR" || die "memprof called on the unsafe thread"
    assert_untouched "$PID"
    ! grep -q 'unsafe read' "$TARGET_OUT" || die "the parked read returned early"
    release_and_finish "$fifo"
    assert_untouched "$PID"
}

check_refused signal 'running a signal handler'
check_refused dlopen 'inside (the dynamic loader|dlopen)' "$TARGETS/unsafe_ctor.so"
check_refused extent 'inside jemalloc'

# Every thread unsafe: a clear refusal, nothing changed.
mkfifo "$WORK/fifo.alone"
start_target unsafe_frames signal "$WORK/fifo.alone" alone
mp -p "$PID" -e 'prof on'
assert_fail
assert_err "no thread of process $PID could be stopped safely"
assert_err 'signal handler'
assert_untouched "$PID"
release_and_finish "$WORK/fifo.alone"
mp -p "$PID" -e 'mallctl prof.active'
assert_ok
assert_out '^prof.active: false'
assert_no_dump_dirs
