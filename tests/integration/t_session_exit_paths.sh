# Every way a session ends leaves the process running, untraced, not
# stopped, with no memprof directory behind: quit, EOF, SIGTERM, SIGHUP,
# SIGINT (batch).  And a process that dies under an idle session (attached,
# its first command answered) gives a clear error, not a crash and not the
# refusal of a process that was never there.
. "$SRCDIR/tests/integration/lib.sh"

target_dirs() { ls -d "/proc/$PID/root$TMPDIR"/memprof.* "/proc/$PID/root$TMPDIR"/memprof-* 2>/dev/null; }
no_target_dirs() {
    [ -z "$(target_dirs)" ] && return 0
    echo "  left behind: $(target_dirs)" >&2
    return 1
}
check_target_clean() {    # WHEN
    check "after $1: the process is left running, untraced" untouched "$PID"
    check "after $1: no dump directory left" no_target_dirs
}

start_target session_idle

# quit, after a dump created the session directory
mp -p "$PID" -e 'prof on' -e 'dump' -e 'prof off' -e quit
check "quit: exit 0" mp_ok
check_target_clean quit

# EOF on stdin
printf 'info\ndump\n' | "$MEMPROF" -p "$PID" >/dev/null 2>&1
check "EOF: exit 0" [ $? -eq 0 ]
check_target_clean EOF

# signals while the session is waiting
for sig in TERM HUP INT; do
    # (the private directory forced: a memfd dump leaves nothing to look for)
    MEMPROF_TEST_NO_MEMFD=1 "$MEMPROF" -p "$PID" -e 'dump' -e 'sleep 30' >"$WORK/out.$sig" 2>&1 &
    mpid=$!
    wait_until 10 "the dump before SIG$sig" grep -q 'stacks' "$WORK/out.$sig"
    # the session's directory is where the checks below look for it
    check "SIG$sig: the session directory exists meanwhile" [ -n "$(dump_dirs)" ]
    kill -"$sig" "$mpid"
    check "SIG$sig ends memprof" within 5 ended "$mpid"
    wait "$mpid"; rc=$?
    check "SIG$sig: a non-zero exit" [ "$rc" -ne 0 ]
    check_target_clean "SIG$sig"
done

# the process dies while the session is idle: attached, its first command
# answered, waiting for the next
open_session gone
echo info >&3
wait_until 10 "the first info of the idle session" grep -q '^pauses ' "$WORK/gone.out"
check "the idle session attached before the target died" \
    grep -q "^attached to process $PID" "$WORK/gone.out"
kill -9 "$PID"; wait "$PID" 2>/dev/null
echo info >&3
close_session
check "info on a dead process: exit 1" [ "$MPRC" -eq 1 ]
check "it says the process has exited" file_has "$WORK/gone.out" "^memprof: (stdin:[0-9]+: )?process $PID (has exited|exited since)"
check "not the refusal of a process never attached" file_lacks "$WORK/gone.out" "no process $PID"
check "not a wrong guess of another debugger" file_lacks "$WORK/gone.out" 'another debugger'
check "memprof did not crash" file_lacks "$WORK/gone.out" '[Ss]egmentation|[Aa]bort|[Ss]anitizer'
