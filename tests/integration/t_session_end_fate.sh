# What a session says at its end must be true for the way it ended.  A
# session that changed the process's profiling and then lost the process
# (it exited, or executed a new program) has nothing to put back and
# nothing stays changed: it must not tell the operator to "run memprof -p
# N and set them again", nor that profiling "stays on" in a process that
# is gone.  Each case ends both ways: normally (end of input) and on a
# failing command (the batch then tries to put things back).
. "$SRCDIR/tests/integration/lib.sh"

# Commands go in one at a time through a FIFO, so the process can be made
# to end between them.
session_start() {
    rm -f "$WORK/cmds"; mkfifo "$WORK/cmds"
    "$MEMPROF" -p "$PID" <"$WORK/cmds" >"$WORK/mp.out" 2>"$WORK/mp.err" &
    MP=$!
    PIDS+=("$MP")     # killed by cleanup if the test dies with the FIFO open
    exec 3>"$WORK/cmds"
}
ask() {   # COMMAND REGEX-OF-THE-ANSWER
    echo "$1" >&3
    wait_until 20 "memprof answered '$1'" grep -Eq -- "$2" "$WORK/mp.out"
}
session_end() {   # close the input; memprof's exit status in RC
    exec 3>&-
    wait "$MP"; RC=$?
    ERR=$(cat "$WORK/mp.err")
    printf '%s\n(exit %d)\n' "$ERR" "$RC" >&2
}
no_false_end() {   # CASE
    check "$1: never 'could not put back'" bash -c '! grep -q "could not put back" <<<"$1"' _ "$ERR"
    check "$1: never 'stays on' in a process that is gone" bash -c '! grep -q "stays on in process" <<<"$1"' _ "$ERR"
}

for ending in normal failing; do
    start_target session_idle
    session_start
    ask 'prof on' '^profiling is now on'
    kill -9 "$PID"; wait "$PID" 2>/dev/null
    [ "$ending" = failing ] && echo 'info' >&3
    session_end
    check "exit, $ending end: says the process exited and there is nothing to put back" \
        grep -q "process $PID has exited: what this session changed in it ended with it, and there is nothing to put back" <<<"$ERR"
    no_false_end "exit, $ending end"
done

for ending in normal failing; do
    start_target reexec
    session_start
    ask 'prof on' '^profiling is now on'
    gen=$(grep -c '^gen ' "$TARGET_OUT")
    wait_until 20 "the target to execute itself again" eval '[ "$(grep -c "^gen " "$TARGET_OUT")" -gt "$gen" ]'
    [ "$ending" = failing ] && echo 'info' >&3
    session_end
    no_false_end "exec, $ending end"
    check "exec, $ending end: says nothing of putting back" bash -c '! grep -q "put back" <<<"$1"' _ "$ERR"
    kill -9 "$PID" 2>/dev/null
done
