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
        local i
        for i in $(seq 50); do [ "$(state_of "$PID")" = t ] && break; sleep 0.05; done
        [ "$(state_of "$PID")" = t ] || die "thread not held at a stop while memprof is stopped"
        kill -9 "$MP"
    else
        kill -9 "$MP"
        cat "$WORK/dumpfifo" >"$WORK/dump.out" &
        CAT=$!
    fi
    wait "$MP" 2>/dev/null
    wait "$CAT"
    grep -q '^heap_v2/' "$WORK/dump.out" || die "the dump did not complete after memprof died"
    rm -rf $(dump_dirs)     # what the killed memprof could not remove
}
# Wait for line $2 in the target's output (a new round or sleep).
wait_line() {
    for i in $(seq 100); do grep -q "$2" "$TARGET_OUT" && return 0
        grep -q 'BAD\|EARLY\|CORRUPT' "$TARGET_OUT" && break; alive "$1" || break; sleep 0.1; done
    die "target: $(tail -2 "$TARGET_OUT")"
}
# A normal session afterwards: prof on/off/dump all work, nothing left over,
# and it keeps the trampoline the dead memprof left at the entry point (a
# thread of a dead memprof may still return into it), the rest intact.
later_session() {
    toggles 3
    mp -p "$PID" -x "$WORK/toggles"
    assert_ok
    assert_untouched "$PID"
    assert_text_intact "$PID" "$(basename "$(readlink "/proc/$PID/exe")")" entry-kept
}

for how in kill stop; do
    # --- blocked in read(): -ERESTARTSYS --------------------------------------
    rm -f "$WORK/readfifo"; mkfifo "$WORK/readfifo"
    start_target sleepers read "$WORK/readfifo"
    start_blocked_dump env MEMPROF_CALL_TIMEOUT=3600
    kill_memprof "$how"
    for i in $(seq 50); do [ "$(tracer_of "$PID")" = 0 ] && break; sleep 0.05; done
    assert_untouched "$PID"
    grep -q BAD "$TARGET_OUT" && die "$how: $(grep BAD "$TARGET_OUT")"
    later_session
    check_reader "$WORK/readfifo"
    assert_untouched "$PID"

    # --- asleep in nanosleep: -ERESTART_RESTARTBLOCK ---------------------------
    start_target sleepers sleep
    start_blocked_dump env MEMPROF_CALL_TIMEOUT=3600
    kill_memprof "$how"
    assert_untouched "$PID"
    n=$(grep -c '^sleeps' "$TARGET_OUT")
    wait_line "$PID" "^sleeps $((n + 1))\$"
    later_session
    wait_line "$PID" "^sleeps $((n + 3))\$"
    grep -q 'EARLY\|BAD' "$TARGET_OUT" && die "$how: $(grep 'EARLY\|BAD' "$TARGET_OUT")"
    assert_untouched "$PID"

    # --- spinning with live AVX registers and red zone -------------------------
    start_target avx_redzone
    start_blocked_dump env MEMPROF_CALL_TIMEOUT=3600
    kill_memprof "$how"
    assert_untouched "$PID"
    n=$(grep -c '^rounds' "$TARGET_OUT")
    wait_line "$PID" "^rounds $((n + 1))\$"
    later_session
    grep -q CORRUPT "$TARGET_OUT" && die "$how: $(grep CORRUPT "$TARGET_OUT")"
    [ "$(state_of "$PID")" = R ] || die "spinning target is not running"
done
assert_no_dump_dirs
