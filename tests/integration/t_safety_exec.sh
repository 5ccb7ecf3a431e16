# A target that executes itself again every ~300 ms (tests/targets/reexec),
# from its main thread or from another thread in turn, meets many short
# memprof sessions.  Whatever point of a stop the exec falls on:
#  - no session hangs (each runs under timeout; a dead thread memprof
#    traced must be reaped, else the exec waits for it forever while
#    holding the lock the next PTRACE_SEIZE needs);
#  - the target is never left stopped or traced, and keeps exec'ing;
#  - a session that loses its program says so ("executed a new program",
#    "exited"), never "another debugger", an errno of 0 ("Success") or a
#    file it could not read;
#  - none attached right after an exec, before the new program's loader
#    mapped jemalloc, or while a thread's exec made the main thread look
#    like a zombie, says "does not use jemalloc" or "zombie": each session
#    succeeds or says that the process exec'd, exited or is still loading
#    (these come in a few of a thousand sessions: t_attach_loader_busy
#    holds the loader's window open to test it deterministically).
# How many of 200 sessions meet an exec depends on how long a session
# takes beside the target's 300 ms (6 here; a machine five times faster
# would see one or none): sessions go on past 200 until one has met an
# exec and one has succeeded, within a deadline that stretches with $SLOW.
. "$SRCDIR/tests/integration/lib.sh"

SESSIONS=${SESSIONS:-200}
start_target reexec
gens_before=$(grep -c '^gen ' "$TARGET_OUT")
hung=0 ok=0 failed=0 bad_msgs=0 left_stopped=0 misread=0 unexplained=0
: >"$WORK/messages"
met_exec() { grep -q 'executed a new program' "$WORK/messages"; }
deadline=$(( ${EPOCHREALTIME/[.,]/} + $(awk -v k="$SLOW" 'BEGIN { printf "%d", 120 * k * 1000000 }') ))
i=0
while [ "$i" -lt "$SESSIONS" ] || { { ! met_exec || [ "$ok" = 0 ]; } &&
        [ "${EPOCHREALTIME/[.,]/}" -lt "$deadline" ]; }; do
    i=$((i + 1))
    timeout -s KILL $((30 * SLOW)) "$MEMPROF" -p "$PID" -e 'mallctl stats.allocated' \
        -e 'mallctl epoch 1' -e 'mallctl stats.allocated' >"$WORK/s.out" 2>"$WORK/s.err"
    rc=$?
    case $rc in
    0) ok=$((ok + 1)) ;;
    137) hung=$((hung + 1)); echo "session $i hung: $(cat "$WORK/s.err")" ;;
    *) failed=$((failed + 1)) ;;
    esac
    if grep -Eq 'another debugger|Success|from its file|Operation not permitted' "$WORK/s.err"; then
        bad_msgs=$((bad_msgs + 1))
        echo "session $i: $(cat "$WORK/s.err")"
    fi
    if grep -Eq 'does not use jemalloc|zombie' "$WORK/s.err"; then
        misread=$((misread + 1))
        echo "session $i: $(cat "$WORK/s.err")"
    fi
    if [ "$rc" != 0 ] && ! grep -Eq 'executed a new program|was executing a new program|exited|still loading its libraries' "$WORK/s.err"; then
        unexplained=$((unexplained + 1))
        echo "session $i failed without saying the process exec'd or exited: $(cat "$WORK/s.err")"
    fi
    grep '^memprof:' "$WORK/s.err" | sed -E 's/[0-9]+/N/g' >>"$WORK/messages"
    case "$(state_of "$PID")" in T|t) left_stopped=$((left_stopped + 1)) ;; esac
    [ "$(tracer_of "$PID")" = 0 ] || left_stopped=$((left_stopped + 1))
done
echo "sessions $i: ok $ok, failed $failed, hung $hung"
sort "$WORK/messages" | uniq -c | sort -rn | head -20
check "no session hung" [ "$hung" = 0 ]
check "no wrong message (another debugger, Success, entry-point file)" [ "$bad_msgs" = 0 ]
check "the target was never left stopped or traced" [ "$left_stopped" = 0 ]
check "no session said 'does not use jemalloc' or 'zombie'" [ "$misread" = 0 ]
check "every failed session said the process exec'd, exited or is loading" [ "$unexplained" = 0 ]
check "some sessions met an exec and said so" grep -q 'executed a new program' "$WORK/messages"
check "some sessions succeeded" [ "$ok" -gt 0 ]
gens_now() { [ "$(grep -c '^gen ' "$TARGET_OUT")" -gt $((gens_before + 2)) ]; }
wait_until 10 "the target to keep exec'ing" gens_now
check "the target is alive" alive "$PID"
