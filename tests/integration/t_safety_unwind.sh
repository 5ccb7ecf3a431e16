# A thread parked in a restartable read() but with an unsafe frame on its
# stack (a signal handler; ld.so running a constructor under dlopen; a
# jemalloc extent hook under mallocx) ranks first (lowest tid, same rank as
# the helper): memprof must refuse it for the right reason, use the helper
# thread, count the refusal, and leave the parked thread to finish its read
# intact.  When every thread is unsafe memprof gives up with a clear
# message after bounded retries and changes nothing.  A library mapped
# after the session's first stop is walked through, not cut short; a
# stack deeper than memprof walks is refused (its unseen frames unchecked).
. "$SRCDIR/tests/integration/lib.sh"

MESSAGE='memprof-unsafe-frame-message'

release_and_finish() {   # FIFO: write the message, wait for the verdict
    printf '%s\n' "$MESSAGE" >"$1"
    wait_until 10 "the main thread to finish" grep -q '^finished' "$TARGET_OUT"
    check "$mode: the parked read gets its message intact" file_has "$TARGET_OUT" '^unsafe read ok'
}

check_refused() {        # MODE WHY-REGEX [EXTRA-ARG]
    mode=$1
    local why=$2 fifo="$WORK/fifo.$1"
    mkfifo "$fifo"
    start_target unsafe_frames "$mode" "$fifo" ${3:+"$3"}
    local helper
    helper=$(awk '/^helper/ {print $2}' "$TARGET_OUT")
    [ "$helper" -gt "$PID" ] || die "helper tid $helper is below $PID: main would not be tried first"
    MEMPROF_TRACE_PAUSES=1 mp -p "$PID" -e 'prof on' -e 'prof off' -e info
    check "$mode: the session ran" mp_ok
    check "$mode: the helper thread was used" out_has "^pauses .* last [0-9]+ us \(thread $helper\)"
    check "$mode: the refusal is counted" out_has "; [1-9][0-9]* unsafe threads skipped"
    check "$mode: refused for the right reason" err_has "^pause tid=$PID .* refused \($why"
    check "$mode: no call on the unsafe thread" err_lacks "^pause tid=$PID .* calls=[1-9]"
    check "$mode: the process is left running, untraced" untouched "$PID"
    check "$mode: the parked read did not return early" file_lacks "$TARGET_OUT" 'unsafe read'
    release_and_finish "$fifo"
    check "$mode: the process is still untouched" untouched "$PID"
}

check_refused signal 'running a signal handler'
check_refused dlopen 'inside (the dynamic loader|dlopen)' "$TARGETS/unsafe_ctor.so"
check_refused extent 'inside jemalloc'
# A stack deeper than memprof walks: the frames below are unchecked.
check_refused deep 'its stack is deeper than 1024 frames'

# A library mapped after memprof's first stop, with a frame of its own
# (no frame pointer) on the stack of the thread memprof tries first: the
# next stop of the same session reads that library's unwind tables, walks
# the stack to its end and uses the thread.  A walk that stopped at the
# unknown frame would refuse it (frames left unchecked), and the helper
# would be used instead.
mode=late
mkfifo "$WORK/fifo.late"
start_target unsafe_frames late "$WORK/fifo.late" "$TARGETS/late_park.so"
feed_late() {
    echo 'prof on'
    wait_until 20 "memprof's first stop" grep -q "^pause tid=$PID .* calls=[1-9]" "$WORK/late.err"
    printf 'load\n' >"$WORK/fifo.late"
    wait_until 20 "the target parked inside the late library" \
        eval '[ "$(grep -c "^ready" "$TARGET_OUT")" -ge 2 ]'
    echo 'prof off'
    echo 'info'
}
feed_late | MEMPROF_TRACE_PAUSES=1 "$MEMPROF" -p "$PID" >"$WORK/late.out" 2>"$WORK/late.err"
RC=$?
OUT=$(cat "$WORK/late.out") ERR=$(cat "$WORK/late.err")
check "late: the session ran" mp_ok
check "late: the library was mapped in the session" \
    grep -q 'late_park\.so' "/proc/$PID/maps"
check "late: both commands called on the first thread" \
    holds eval '[ "$(grep -c "^pause tid=$PID .* calls=[1-9]" <<<"$ERR")" -ge 2 ]'
check "late: it was never refused" err_lacks "^pause tid=$PID .* refused"
check "late: profiling is off again" out_has 'profiling is now off'
release_and_finish "$WORK/fifo.late"
check "late: the process is still untouched" untouched "$PID"

# Every thread unsafe: a clear refusal, nothing changed.
mode=alone
mkfifo "$WORK/fifo.alone"
start_target unsafe_frames signal "$WORK/fifo.alone" alone
mp -p "$PID" -e 'prof on'
check "alone: refused" mp_failed
check "alone: says no thread could be stopped safely" err_has "no thread of process $PID could be stopped safely"
check "alone: names the signal handler" err_has 'signal handler'
check "alone: the process is left running, untraced" untouched "$PID"
release_and_finish "$WORK/fifo.alone"
mp -p "$PID" -e 'mallctl prof.active'
check "alone: a later session works" mp_ok
check "alone: profiling is still off" out_has '^prof.active: false'
check "no dump directory left" no_dump_dirs
