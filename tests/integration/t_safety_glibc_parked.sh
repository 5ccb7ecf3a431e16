# A glibc malloc process whose main thread (lowest tid, tried first) is
# parked inside glibc's allocator: malloc_info() is writing to a stream
# whose write callback blocks.  glibc's internals are not in libc's symbol
# table; memprof tells by the allocator's entry point on the thread's
# stack.  'stats' and 'purge' must borrow the helper thread, count the
# refusal, and leave the parked call to finish intact; with no other
# thread, they refuse clearly and change nothing.
. "$SRCDIR/tests/integration/lib.sh"

release() {      # FIFO: let the parked malloc_info() finish, check it did
    printf 'go\n' >"$1"
    wait_until 10 "the parked call to finish" grep -q '^unparked' "$TARGET_OUT"
    check "$mode: the parked malloc_info() finished whole" file_has "$TARGET_OUT" '^unparked ok'
}

mode=helper
mkfifo "$WORK/fifo.helper"
CONF= start_target glibc_parked "$WORK/fifo.helper"
parked=$(awk '/^parked/ {print $2}' "$TARGET_OUT")
helper=$(awk '/^helper/ {print $2}' "$TARGET_OUT")
[ "$parked" = "$PID" ] && [ "$helper" -gt "$PID" ] || die "parked $parked, helper $helper: main is not tried first"
MEMPROF_TRACE_PAUSES=1 mp -p "$PID" -e stats -e purge -e info
check "$mode: stats and purge ran" mp_ok
check "$mode: the parked thread was refused inside malloc_info" \
    err_has "^pause tid=$PID .* refused \(inside malloc_info \(libc\.so"
check "$mode: no call on the parked thread" err_lacks "^pause tid=$PID .* calls=[1-9]"
check "$mode: the helper thread was used" out_has "^pauses .* \(thread $helper\)"
check "$mode: the refusals are counted" out_has "; [1-9][0-9]* unsafe threads skipped"
check "$mode: the process is left running, untraced" untouched "$PID"
check "$mode: the parked call is still parked" file_lacks "$TARGET_OUT" '^unparked'
release "$WORK/fifo.helper"
check "$mode: the process is still untouched" untouched "$PID"

mode=alone
mkfifo "$WORK/fifo.alone"
CONF= start_target glibc_parked "$WORK/fifo.alone" alone
MEMPROF_TRACE_PAUSES=1 mp -p "$PID" -e purge
check "$mode: refused" mp_failed
check "$mode: says no thread could be stopped safely" \
    err_has "no thread of process $PID could be stopped safely"
check "$mode: names where it is" err_has 'inside malloc_info'
check "$mode: no call was made" err_lacks '^pause .* calls=[1-9]'
check "$mode: the process is left running, untraced" untouched "$PID"
release "$WORK/fifo.alone"
mp -p "$PID" -e purge
check "$mode: once out of the allocator, purge works" mp_ok
check "$mode: the process is still untouched" untouched "$PID"
