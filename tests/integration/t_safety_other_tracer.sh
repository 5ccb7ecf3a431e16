# Threads held by another tracer (strace -p TID) are not a reason to fail:
# with every thread of a 48-thread process but one traced by strace, each
# session passes over the traced ones it tries first (saying so in the
# pause trace: they do not use up its candidates) and borrows the free one,
# the last in its order; only when no thread is left is the session
# refused, naming the tracer.  The process and the tracer
# are left as they were.
. "$SRCDIR/tests/integration/lib.sh"

start_target many_arenas
tids=$(ls "/proc/$PID/task" | sort -n)
free_tid=$(tail -1 <<<"$tids")
args=()
for t in $tids; do [ "$t" = "$free_tid" ] || args+=(-p "$t"); done
strace -o /dev/null "${args[@]}" 2>/dev/null &
STRACE=$!
PIDS+=("$STRACE")
all_but_one_traced() {
    local t
    for t in $tids; do
        [ "$t" = "$free_tid" ] && continue
        [ "$(tracer_of "$PID/task/$t")" = "$STRACE" ] || return 1
    done
}
wait_until 20 "strace to hold every thread but one" all_but_one_traced

ok=0
for i in 1 2 3 4 5 6; do
    MEMPROF_TRACE_PAUSES=1 mp -p "$PID" -e 'prof on' -e 'prof off' -e info
    [ "$RC" = 0 ] && grep -q "(thread $free_tid)" <<<"$OUT" && ok=$((ok + 1))
done
check "six sessions of three commands each worked, on the free thread" [ "$ok" = 6 ]
check "the traced threads tried first were passed over, naming the tracer" \
    err_has "^skip tid=[0-9]+ \(traced: thread [0-9]+ by process $STRACE \(strace\)\)"
check "the free thread stayed untraced between sessions" \
    [ "$(tracer_of "$PID/task/$free_tid")" = 0 ]
check "strace still holds the others" all_but_one_traced

kill "$STRACE"; wait "$STRACE" 2>/dev/null
wait_until 10 "strace to let go" untraced "$PID"
check "the process is left running, untraced" untouched "$PID"

# The one free thread traced too: refused, naming the tracer.
start_target sleepers sleep
strace -o /dev/null -p "$PID" 2>/dev/null &
STRACE=$!
PIDS+=("$STRACE")
wait_until 10 "strace to attach" traced "$PID"
mp -p "$PID" -e 'prof on'
check "no thread left: refused" mp_failed
check "no thread left: names the tracer" err_has "traced by process $STRACE \(strace\)"
kill "$STRACE"; wait "$STRACE" 2>/dev/null
wait_until 10 "strace to let go" untraced "$PID"
mp -p "$PID" -e 'mallctl prof.active'
check "no thread left: nothing was changed" out_has '^prof.active: false'
check "no thread left: the process is left as it was" untouched "$PID"
