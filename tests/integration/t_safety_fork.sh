# A process forking in a tight loop (issue 23 item 2; its speed is
# bench/fork.sh's): a session of 300 reads answers every one, with no
# failure, although many stops meet a thread inside fork (libc's, or
# jemalloc's own handlers, which hold its locks: passed over); the process
# keeps forking and reaping afterwards and is left untraced and running.
. "$SRCDIR/tests/integration/lib.sh"

start_target fork_loop fork 16
for i in $(seq 300); do echo 'mallctl stats.allocated'; done >"$WORK/script"
MEMPROF_TRACE_PAUSES=1 mp -p "$PID" -x "$WORK/script"
check "every read answered" [ "$(grep -c '^stats.allocated: [0-9]' <<<"$OUT")" = 300 ]
check "the session succeeded" mp_ok
loops_now() {
    local before
    before=$(grep -c '^loops' "$TARGET_OUT")
    kill -USR1 "$PID"
    wait_until 10 "the target to count its loops" \
        eval '[ "$(grep -c "^loops" "$TARGET_OUT")" -gt '"$before"' ]'
    awk '/^loops/ {n = $2} END {print n}' "$TARGET_OUT"
}
first=$(loops_now)
forked_since() { [ "$(loops_now)" -gt "$((first + 10))" ]; }
wait_until 20 "the target to fork ten times more" forked_since
check "the target keeps forking" forked_since
check "the target is left running, untraced" untouched "$PID"
