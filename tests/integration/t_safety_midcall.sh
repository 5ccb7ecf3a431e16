# What happens while the hijacked thread is inside mallctl, made to block
# there deterministically: `mallctl prof.dump FIFO` makes the target's
# thread wait in open() of a FIFO until the test opens it for reading.
# The target (sleepers read) is single-threaded and itself blocked in read()
# on another FIFO: getting the whole message afterwards proves its
# registers and syscall restart survived.
#  - the target is killed with SIGKILL mid-call: memprof says so, exits 1;
#  - memprof gets SIGTERM, SIGINT, SIGHUP or SIGQUIT mid-call: it leaves
#    the call at once (the thread, detached inside it, restores itself once
#    the call returns) and only then does the signal act (SIGQUIT, which
#    memprof does not handle, then kills it: harmless by then);
#  - the target gets SIGSTOP mid-call: memprof finishes and detaches, the
#    process stays stopped, and runs normally after SIGCONT.
. "$SRCDIR/tests/integration/lib.sh"


# Start a sleeper and memprof on it, blocked in its dump (start_blocked_dump).
start_blocked_call() {
    rm -f "$WORK/readfifo"; mkfifo "$WORK/readfifo"
    start_target sleepers read "$WORK/readfifo"
    SIGBLK=$(sigblk "$PID")
    # A background job starts with SIGINT/SIGQUIT ignored: give memprof the
    # defaults a user's would have (memprof handles INT, TERM, HUP; QUIT
    # kills).  No call limit: only the signal may end the call's wait.
    start_blocked_dump env --default-signal=INT,QUIT MEMPROF_CALL_TIMEOUT=3600
}
sigblk() { awk '/^SigBlk:/ {print $2}' "/proc/$1/status"; }
release_dump() { cat "$WORK/dumpfifo" >"$WORK/dump.out"; }
wait_mp() { wait "$MP"; MPRC=$?; }
mp_ended() { case "$(state_of "$MP")" in ""|Z) return 0 ;; esac; return 1; }

# --- the target dies mid-call ---------------------------------------------
start_blocked_call
kill -9 "$PID"
wait_mp
[ "$MPRC" = 1 ] || die "memprof exited $MPRC after the target died: $(cat "$WORK/mp.err")"
grep -q "process $PID exited during the call" "$WORK/mp.err" || die "stderr: $(cat "$WORK/mp.err")"

# --- memprof is signalled mid-call ------------------------------------------
for sig in TERM INT HUP QUIT; do
    start_blocked_call
    kill -s "$sig" "$MP"
    num=$(kill -l "$sig")
    wait_until 5 "memprof to end after SIG$sig" mp_ended
    wait_mp
    [ "$MPRC" = $((128 + num)) ] || die "memprof exited $MPRC, not by SIG$sig"
    [ "$sig" = QUIT ] || grep -q "memprof got SIG$sig" "$WORK/mp.err" ||
        die "SIG$sig: $(cat "$WORK/mp.err")"
    [ "$(tracer_of "$PID")" = 0 ] || die "the thread is still traced after SIG$sig"
    release_dump
    grep -q '^heap_v2/' "$WORK/dump.out" || die "the dump did not complete after SIG$sig"
    same_mask() { [ "$(sigblk "$PID")" = "$SIGBLK" ]; }
    wait_until 5 "the thread to restore its signal mask after SIG$sig" same_mask
    assert_untouched "$PID"
    check_reader "$WORK/readfifo"
    assert_untouched "$PID"
done

# --- the target is stopped mid-call -------------------------------------------
start_blocked_call
kill -STOP "$PID"
release_dump
wait_mp
[ "$MPRC" = 0 ] || die "memprof exited $MPRC with the target stopped: $(cat "$WORK/mp.err")"
for i in $(seq 50); do [ "$(state_of "$PID")" = T ] && break; sleep 0.1; done
[ "$(state_of "$PID")" = T ] || die "the target's stop was lost (state $(state_of "$PID"))"
[ "$(tracer_of "$PID")" = 0 ] || die "the stopped target is still traced"
kill -CONT "$PID"
check_reader "$WORK/readfifo"
assert_untouched "$PID"
assert_no_dump_dirs
