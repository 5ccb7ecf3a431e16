# memprof dies mid-call and the hijacked thread restores itself from the
# signal frame memprof wrote below its red zone (FIELD-NOTES §3 rule 11).
# The call is made to block deterministically inside mallctl: `mallctl
# prof.dump FIFO` waits in creat() of a FIFO until the test opens it.
# memprof is then killed with SIGKILL (which it cannot block), or stopped
# with SIGSTOP (the thread waits at its next system call stop) and then
# killed.  Once the FIFO is opened the thread finishes mallctl, runs the
# trampoline's rt_sigreturn and must be exactly where it was:
#  - sleepers read: its parked read() restarts (-ERESTARTSYS re-entered) and
#    gets the whole message, its signal mask and sigaltstack unchanged;
#  - sleepers sleep: its nanosleep (-ERESTART_RESTARTBLOCK, re-issued) does
#    not end early or with EINTR, mask and altstack unchanged.  The session
#    stops the thread twice (attach, then the call), so at the second stop
#    it is already in restart_syscall: the number to re-issue is the one
#    memprof remembered from the first;
#  - avx_redzone: ymm0-14, general registers and red zone intact;
# the process is not traced, not stopped, and a new memprof session works.
. "$SRCDIR/tests/integration/lib.sh"


# memprof dies: by SIGKILL, or SIGSTOP (the dump is opened meanwhile, so the
# thread runs on to its next syscall stop and waits there) then SIGKILL.
kill_memprof() {
    if [ "$1" = stop ]; then
        kill -STOP "$MP"
        cat "$WORK/dumpfifo" >"$WORK/dump.out" &
        CAT=$!
        wait_until 2.5 "the thread to wait at a stop while memprof is stopped" state_is "$PID" t
        kill -9 "$MP"
    else
        kill -9 "$MP"
        cat "$WORK/dumpfifo" >"$WORK/dump.out" &
        CAT=$!
    fi
    wait "$MP" 2>/dev/null
    wait "$CAT"
    check "$what: the dump completes after memprof died" is_heap_profile "$WORK/dump.out"
    rm -rf $(dump_dirs)     # what the killed memprof could not remove
}
# Line $2 appears in the target's output (a new round or sleep), before any
# report of damage and while the target $1 lives.
has_line() {
    grep -q "$2" "$TARGET_OUT" && return 0
    grep -q 'BAD\|EARLY\|CORRUPT' "$TARGET_OUT" && die "target: $(grep 'BAD\|EARLY\|CORRUPT' "$TARGET_OUT")"
    alive "$1" || die "target $1 died: $(tail -2 "$TARGET_OUT")"
    return 1
}
# A normal session afterwards: prof on/off/dump all work, nothing left over,
# and it keeps the trampoline the dead memprof left at the entry point (a
# thread of a dead memprof may still return into it), the rest intact.
later_session() {
    toggles 3
    mp -p "$PID" -x "$WORK/toggles"
    check "$what: a later session works" mp_ok
    check "$what: after it the process is left running, untraced" untouched "$PID"
    check "$what: its code is its files' again, the left trampoline kept" \
        text_intact "$PID" "$(basename "$(readlink "/proc/$PID/exe")")" entry-kept
}

for how in kill stop; do
    # --- blocked in read(): -ERESTARTSYS --------------------------------------
    what="$how, in read()"
    rm -f "$WORK/readfifo"; mkfifo "$WORK/readfifo"
    start_target sleepers read "$WORK/readfifo"
    start_blocked_dump env MEMPROF_CALL_TIMEOUT=3600
    kill_memprof "$how"
    check "$what: the thread lets go of the trace" within 2.5 untraced "$PID"
    check "$what: the process is left running, untraced" untouched "$PID"
    check "$what: its context is intact" file_lacks "$TARGET_OUT" BAD
    later_session
    check "$what: its parked read gets the whole message" holds check_reader "$WORK/readfifo"
    check "$what: the process is still untouched" untouched "$PID"

    # --- asleep in nanosleep: -ERESTART_RESTARTBLOCK ---------------------------
    what="$how, in nanosleep()"
    start_target sleepers sleep
    start_blocked_dump env MEMPROF_CALL_TIMEOUT=3600
    kill_memprof "$how"
    check "$what: the process is left running, untraced" untouched "$PID"
    n=$(grep -c '^sleeps' "$TARGET_OUT")
    wait_until 10 "$what: one more whole sleep" has_line "$PID" "^sleeps $((n + 1))\$"
    later_session
    wait_until 10 "$what: two more whole sleeps" has_line "$PID" "^sleeps $((n + 3))\$"
    check "$what: no sleep ended early" file_lacks "$TARGET_OUT" 'EARLY|BAD'
    check "$what: the process is still untouched" untouched "$PID"

    # --- spinning with live AVX registers and red zone -------------------------
    what="$how, spinning with AVX"
    start_target avx_redzone
    start_blocked_dump env MEMPROF_CALL_TIMEOUT=3600
    kill_memprof "$how"
    check "$what: the process is left running, untraced" untouched "$PID"
    n=$(grep -c '^rounds' "$TARGET_OUT")
    wait_until 20 "$what: one more round" has_line "$PID" "^rounds $((n + 1))\$"
    later_session
    check "$what: no register or red-zone corruption" file_lacks "$TARGET_OUT" CORRUPT
    check "$what: the spinning target is running" [ "$(state_of "$PID")" = R ]
done
check "no dump directory left" no_dump_dirs
