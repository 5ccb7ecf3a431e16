# A thread borrowed while it waits in pause() or sigsuspend(), whose
# memprof is SIGKILLed inside the call, restores itself when the call
# returns (the self-restore frame) and must then behave as the kernel
# would have without memprof:
#  - a SIGUSR1 sent while memprof held it: the handler runs once, and the
#    wait returns -1 EINTR once (it does not go back to waiting for a
#    signal that already came), with the mask from before the wait;
#  - no signal while held: no spurious EINTR; the thread waits on, a later
#    session works on it, and the next SIGUSR1 ends the wait once;
#  - a session that is not killed, with a SIGUSR1 while held: the same.
# A thread under a seccomp filter that forbids rt_sigsuspend (which the
# waiting above is made with for pause) is left to re-issue its pause: it
# survives, its handler runs once (its wait goes on: the known limit).
# Modes of the target (tests/targets/signal_waiter.c): pause(); sigsuspend()
# with SIGUSR1 open before and during the wait; and with SIGUSR1 blocked
# except during the wait.  The call blocks in `mallctl prof.dump FIFO`
# until the test opens the FIFO (start_blocked_dump).
. "$SRCDIR/tests/integration/lib.sh"

USR1_BIT=200    # SIGUSR1 (10) in /proc/PID/status's hex signal sets

# The thread waits for a signal, untraced: in pause (34) or rt_sigsuspend
# (130), its own or the one the self-restore stub sleeps in.
waiting() {
    untraced "$PID" || return 1
    case "$(cut -d' ' -f1 "/proc/$PID/syscall" 2>/dev/null)" in 34|130) ;; *) return 1 ;; esac
    state_is "$PID" S
}
usr1_pending() {
    local set
    for set in $(awk '/^(ShdPnd|SigPnd):/ {print $2}' "/proc/$PID/status"); do
        (( 16#$set & 16#$USR1_BIT )) && return 0
    done
    return 1
}
# Exactly N handler runs and N wakes, each EINTR with the mask as before.
woke_exactly() {
    local n=$1 i
    [ "$(grep -c '^handled' "$TARGET_OUT")" = "$n" ] ||
        { echo "  handler ran $(grep -c '^handled' "$TARGET_OUT") times, not $n" >&2; return 1; }
    [ "$(grep -c '^woke' "$TARGET_OUT")" = "$n" ] ||
        { echo "  the wait ended $(grep -c '^woke' "$TARGET_OUT") times, not $n: $(grep '^woke' "$TARGET_OUT" | tr '\n' ';')" >&2; return 1; }
    for i in $(seq "$n"); do
        grep -qx "woke rc=-1 errno=EINTR handled=$i mask=ok" "$TARGET_OUT" ||
            { echo "  wake $i: $(grep '^woke' "$TARGET_OUT" | sed -n "${i}p")" >&2; return 1; }
    done
}
has_wakes() { [ "$(grep -c '^woke' "$TARGET_OUT")" -ge "$1" ]; }
open_dump() {
    cat "$WORK/dumpfifo" >"$WORK/dump.out"
    check "$what: the dump completes" is_heap_profile "$WORK/dump.out"
}
kill_memprof() {
    kill -9 "$MP"
    wait "$MP" 2>/dev/null
    open_dump
    rm -rf $(dump_dirs)     # what the killed memprof could not remove
}

for mode in pause sigsuspend sigsuspend-blocked; do
    start_target signal_waiter "$mode"
    wait_until 10 "the $mode target to wait for a signal" waiting

    # --- SIGUSR1 while memprof holds the thread, then memprof is killed ---
    what="$mode, signal while held, memprof killed"
    start_blocked_dump
    kill -USR1 "$PID"
    wait_until 10 "SIGUSR1 to be pending while the thread is held" usr1_pending
    check "$what: the handler waits while the thread is held" file_lacks "$TARGET_OUT" '^handled'
    kill_memprof
    check "$what: the wait ends" within 10 has_wakes 1
    wait_until 10 "$what: the thread to wait again" waiting
    check "$what: one handler run, one EINTR, the mask as before" woke_exactly 1
    check "$what: the process is left running, untraced" untouched "$PID"

    # --- no signal while held: no spurious EINTR, the next one counts ------
    what="$mode, no signal while held, memprof killed"
    start_blocked_dump
    kill_memprof
    wait_until 10 "$what: the thread to wait again" waiting
    mp -p "$PID" -e 'mallctl stats.allocated'
    check "$what: a later session works while it waits" mp_ok
    wait_until 10 "$what: the thread to wait again after that session" waiting
    check "$what: no spurious EINTR" woke_exactly 1
    kill -USR1 "$PID"
    check "$what: the wait ends on the next signal" within 10 has_wakes 2
    wait_until 10 "$what: the thread to wait again" waiting
    check "$what: the next signal ends the wait once" woke_exactly 2

    # --- a session that ends normally, SIGUSR1 while held ------------------
    what="$mode, signal while held, memprof ends normally"
    start_blocked_dump
    kill -USR1 "$PID"
    wait_until 10 "SIGUSR1 to be pending while the thread is held" usr1_pending
    open_dump
    wait "$MP"; MPRC=$?
    check "$what: memprof succeeds" [ "$MPRC" = 0 ]
    check "$what: the wait ends" within 10 has_wakes 3
    wait_until 10 "$what: the thread to wait again" waiting
    check "$what: one more handler run and EINTR, the mask as before" woke_exactly 3
    check "$what: the process is left running, untraced" untouched "$PID"
    kill -9 "$PID"
done
what="pause under a filter forbidding rt_sigsuspend, signal while held, memprof killed"
start_target signal_waiter pause-seccomp
wait_until 10 "the filtered target to wait for a signal" waiting
start_blocked_dump
kill -USR1 "$PID"
wait_until 10 "SIGUSR1 to be pending while the thread is held" usr1_pending
kill_memprof
handled_once() {
    [ "$(grep -c '^handled' "$TARGET_OUT")" = 1 ] && return 0
    alive "$PID" || die "$what: the process died"
    return 1
}
wait_until 10 "$what: the handler to run" handled_once
wait_until 10 "$what: the thread to wait again" waiting
check "$what: the process survives" alive "$PID"
check "$what: it waits in its own pause" [ "$(cut -d' ' -f1 "/proc/$PID/syscall")" = 34 ]
check "$what: the process is left running, untraced" untouched "$PID"

check "no dump directory left" no_dump_dirs
