# Refusals happen before anything is stopped, with a reason: jemalloc's
# own commands in a process without jemalloc (naming glibc malloc and what
# memprof can do there), a stopped process, an already-traced process, a process that
# is gone.  The refused process must be left as it was.
. "$SRCDIR/tests/integration/lib.sh"

start_target nojemalloc
MEMPROF_TRACE_PAUSES=1 mp -p "$PID" -e 'recent'
check "no jemalloc: recent refused" mp_failed
check "no jemalloc: says so" err_has "'recent' drives jemalloc, and process $PID does not use jemalloc"
check "no jemalloc: names glibc malloc" err_has 'it uses glibc malloc from /.*libc\.so'
check "no jemalloc: says how to profile it: 'prof on', no restart" \
    err_has "To profile it, 'prof on' puts memprof's heap sampler in \(no restart\)"
check "no jemalloc: says what works here" err_has "memprof can run 'info', 'stats', 'memory' and 'purge'"
check "no jemalloc: nothing was stopped" err_lacks '^pause '
check "no jemalloc: the process is left as it was" untouched "$PID"

start_target plain
kill -STOP "$PID"
wait_until 5 "the target to stop" state_is "$PID" T
mp -p "$PID" -e 'prof on'
check "stopped: refused" mp_failed
check "stopped: says so" err_has 'stopped'
check "stopped: left stopped" state_is "$PID" T
check "stopped: left untraced" untraced "$PID"
kill -CONT "$PID"

start_target plain
strace -f -p "$PID" -o /dev/null 2>/dev/null &
STRACE=$!
wait_until 5 "strace to attach" traced "$PID"
mp -p "$PID" -e 'prof on'
check "traced: refused" mp_failed
check "traced: says so" err_has 'already traced'
kill "$STRACE"; wait "$STRACE" 2>/dev/null
wait_until 5 "strace to detach" untraced "$PID"
check "traced: the process is left as it was" untouched "$PID"

start_target plain
gone=$PID
kill -9 "$gone"; wait "$gone" 2>/dev/null
mp -p "$gone" -e info
check "gone: refused" mp_failed
check "gone: says there is no such process" err_has "no process $gone"
check "no dump directory left" no_dump_dirs
