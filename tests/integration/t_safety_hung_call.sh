# A call that never returns: `mallctl prof.dump FIFO` with nobody opening
# the FIFO keeps the hijacked thread in open() inside mallctl.
#  - batch mode gives up after MEMPROF_CALL_TIMEOUT: it names what the
#    thread waits on, leaves the call (the thread, detached inside it,
#    restores itself when the call returns) and exits non-zero;
#  - SIGTERM mid-call (no limit set) ends memprof at once, the same way;
# then, once the FIFO is opened, the call completes and the thread is
# exactly where it was (its parked read() gets the whole message, its
# signal mask is its own), the process untraced; the trampoline left at the
# entry point is put back by the next session, which works.
. "$SRCDIR/tests/integration/lib.sh"

sigblk() { awk '/^SigBlk:/ {print $2}' "/proc/$1/status"; }
mp_ended() { case "$(state_of "$MP")" in ""|Z) return 0 ;; esac; return 1; }
in_open() { case " $OPEN_SYSCALLS " in *" $(cut -d' ' -f1 "/proc/$PID/syscall") "*) return 0 ;; esac; return 1; }
same_mask() { [ "$(sigblk "$PID")" = "$SIGBLK" ]; }
dump_complete() { grep -q '^heap_v2/' "$WORK/dump.out"; }

start_sleeper() {
    rm -f "$WORK/readfifo"; mkfifo "$WORK/readfifo"
    start_target sleepers read "$WORK/readfifo"
    SIGBLK=$(sigblk "$PID")
}
# After memprof left the call: the thread finishes it and restores itself.
check_after_leaving() {
    local what=$1
    check "$what: the thread is untraced once memprof ended" [ "$(tracer_of "$PID")" = 0 ]
    check "$what: the thread is still inside the call" in_open
    cat "$WORK/dumpfifo" >"$WORK/dump.out"
    check "$what: the call completed once the FIFO was opened" dump_complete
    wait_until 5 "the thread to restore its signal mask ($what)" same_mask
    check "$what: signal mask restored" same_mask
    assert_untouched "$PID"
    check_reader "$WORK/readfifo"
    check "$what: the parked read() got its message after the restore" \
        grep -q 'read ok' "$TARGET_OUT"
    mp -p "$PID" -e 'mallctl stats.allocated' -e 'prof on' -e 'prof off'
    check "$what: the next session works" [ "$RC" = 0 ]
    assert_untouched "$PID"
    # The left call's trampoline stays at the entry point: no later session
    # can prove that no thread will still return there, so it is kept.
    check "$what: the trampoline stays for the left call" \
        [ "$(entry_bytes "$PID")" = "$TRAMPOLINE" ]
    assert_text_intact "$PID" sleepers entry-kept
}

# --- batch mode gives up after the limit ---------------------------------
start_sleeper
start_blocked_dump env MEMPROF_CALL_TIMEOUT=1
wait_until 30 "memprof to give up on the call" mp_ended
wait "$MP"; MPRC=$?
cat "$WORK/mp.err"
check "limit: memprof exits 1" [ "$MPRC" = 1 ]
# after the 1 s limit or later (how much later is memprof's speed, and
# the machine's: not a limit of this test)
check "limit: names what the thread waits on, after 1 s or more" grep -Eq \
    "has not returned after ([1-9]|[1-9][0-9]+)\.[0-9] s: thread $PID is blocked in [a-z_0-9]+ \(system call [0-9]+\)" "$WORK/mp.err"
check "limit: says the call was left" grep -q "memprof left the call" "$WORK/mp.err"
check_after_leaving limit

# --- SIGTERM mid-call ends memprof at once --------------------------------
start_sleeper
start_blocked_dump env MEMPROF_CALL_TIMEOUT=3600
start=$(date +%s.%N)
kill -TERM "$MP"
wait_until 5 "memprof to end after SIGTERM" mp_ended
echo "memprof ended $(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }') s after SIGTERM"
wait "$MP"; MPRC=$?
cat "$WORK/mp.err"
check "SIGTERM: memprof exits by SIGTERM" [ "$MPRC" = 143 ]
check "SIGTERM: says it left the call" grep -q "memprof got SIGTERM .* memprof left the call" "$WORK/mp.err"
check_after_leaving SIGTERM
assert_no_dump_dirs
