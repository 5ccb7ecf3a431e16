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
check "target killed mid-call: memprof exits 1" [ "$MPRC" = 1 ]
check "target killed mid-call: memprof says so" \
    file_has "$WORK/mp.err" "process $PID exited during the call"

# --- memprof is signalled mid-call ------------------------------------------
for sig in TERM INT HUP QUIT; do
    start_blocked_call
    kill -s "$sig" "$MP"
    num=$(kill -l "$sig")
    check "SIG$sig mid-call: memprof ends at once" within 5 mp_ended
    wait_mp
    check "SIG$sig mid-call: memprof ends by it" [ "$MPRC" = $((128 + num)) ]
    check "SIG$sig mid-call: memprof says it got the signal" \
        eval '[ "$sig" = QUIT ] || grep -q "memprof got SIG$sig" "$WORK/mp.err"'
    check "SIG$sig mid-call: the thread is left untraced" [ "$(tracer_of "$PID")" = 0 ]
    release_dump
    check "SIG$sig mid-call: the dump completed" is_heap_profile "$WORK/dump.out"
    same_mask() { [ "$(sigblk "$PID")" = "$SIGBLK" ]; }
    check "SIG$sig mid-call: the thread restores its signal mask" within 5 same_mask
    check "SIG$sig mid-call: the process is left running, untraced" untouched "$PID"
    check "SIG$sig mid-call: its parked read gets the whole message" holds check_reader "$WORK/readfifo"
    check "SIG$sig mid-call: the process is still untouched" untouched "$PID"
done

# --- the target is stopped mid-call -------------------------------------------
start_blocked_call
kill -STOP "$PID"
release_dump
wait_mp
check "target stopped mid-call: memprof exits 0" [ "$MPRC" = 0 ]
check "target stopped mid-call: its stop is kept" within 5 state_is "$PID" T
check "target stopped mid-call: left untraced" untraced "$PID"
kill -CONT "$PID"
check "after SIGCONT: its parked read gets the whole message" holds check_reader "$WORK/readfifo"
check "after SIGCONT: the process is left running, untraced" untouched "$PID"
check "no dump directory left" no_dump_dirs
