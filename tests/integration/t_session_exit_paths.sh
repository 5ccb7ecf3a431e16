# Every way a session ends leaves the process running, untraced, not
# stopped, with no memprof directory behind: quit, EOF, SIGTERM, SIGHUP,
# SIGINT (batch).  And a process that dies under an idle session gives a
# clear error, not a crash.
. "$SRCDIR/tests/integration/lib.sh"

check_target_clean() {
    alive "$PID" || die "target died ($1)"
    local st tracer
    st=$(awk '/^State:/ {print $2}' /proc/$PID/status)
    tracer=$(awk '/^TracerPid:/ {print $2}' /proc/$PID/status)
    [ "$tracer" = 0 ] || die "target still traced by $tracer ($1)"
    [ "$st" != T ] && [ "$st" != t ] || die "target left stopped ($1)"
    [ -z "$(dump_dirs)" ] || die "dump directory left behind ($1): $(dump_dirs)"
    return 0
}

start_target session_idle

# quit, after a dump created the session directory
mp -p "$PID" -e 'prof on' -e 'dump' -e 'prof off' -e quit
assert_ok
check_target_clean quit

# EOF on stdin
printf 'info\ndump\n' | "$MEMPROF" -p "$PID" >/dev/null 2>&1 || die "stdin batch failed"
check_target_clean EOF

# signals while the session is waiting
for sig in TERM HUP INT; do
    # (the private directory forced: a memfd dump leaves nothing to look for)
    MEMPROF_TEST_NO_MEMFD=1 "$MEMPROF" -p "$PID" -e 'dump' -e 'sleep 30' >"$WORK/out.$sig" 2>&1 &
    mpid=$!
    for i in $(seq 100); do
        grep -q 'stacks' "$WORK/out.$sig" && break
        sleep 0.05
    done
    # the session's directory is where the checks below look for it
    [ -n "$(dump_dirs)" ] || die "no session directory in $TMPDIR during the session"
    kill -"$sig" "$mpid"
    for i in $(seq 100); do kill -0 "$mpid" 2>/dev/null || break; sleep 0.05; done
    kill -0 "$mpid" 2>/dev/null && die "memprof ignored SIG$sig"
    wait "$mpid"; rc=$?
    [ "$rc" -ne 0 ] || die "memprof exited 0 after SIG$sig"
    check_target_clean "SIG$sig"
done

# the process dies while the session is idle
mkfifo "$WORK/cmds"
"$MEMPROF" -p "$PID" <"$WORK/cmds" >"$WORK/out.gone" 2>&1 &
mpid=$!
exec 3>"$WORK/cmds"
echo info >&3
sleep 0.5
kill -9 "$PID"; wait "$PID" 2>/dev/null
echo info >&3
exec 3>&-
wait "$mpid"; rc=$?
[ "$rc" -eq 1 ] || die "info on a dead process: expected exit 1, got $rc"
grep -Eq 'memprof: .*(exited|no longer exists|does not exist|gone)' "$WORK/out.gone" \
    || die "no clear message for a vanished process: $(cat "$WORK/out.gone")"
grep -qi 'segmentation\|abort\|sanitizer' "$WORK/out.gone" && die "memprof crashed"
echo "exit paths ok"
