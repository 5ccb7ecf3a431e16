# Refusals happen before anything is stopped, with a reason: no jemalloc
# (naming glibc malloc), a stopped process, an already-traced process, a
# process that is gone.  The refused process must be left as it was.
. "$SRCDIR/tests/integration/lib.sh"

start_target nojemalloc
mp -p "$PID" -e info
assert_fail
assert_err 'does not use jemalloc'
assert_err 'glibc malloc'
assert_untouched "$PID"

start_target plain
kill -STOP "$PID"
for i in $(seq 50); do [ "$(state_of "$PID")" = T ] && break; sleep 0.05; done
mp -p "$PID" -e 'prof on'
assert_fail
assert_err 'stopped'
[ "$(state_of "$PID")" = T ] || die "stopped target was resumed by memprof"
[ "$(tracer_of "$PID")" = 0 ] || die "stopped target left traced"
kill -CONT "$PID"

start_target plain
strace -f -p "$PID" -o /dev/null 2>/dev/null &
STRACE=$!
for i in $(seq 50); do [ "$(tracer_of "$PID")" != 0 ] && break; sleep 0.1; done
[ "$(tracer_of "$PID")" != 0 ] || die "strace did not attach"
mp -p "$PID" -e 'prof on'
assert_fail
assert_err 'already traced'
kill "$STRACE"; wait "$STRACE" 2>/dev/null
for i in $(seq 50); do [ "$(tracer_of "$PID")" = 0 ] && break; sleep 0.1; done
assert_untouched "$PID"

start_target plain
gone=$PID
kill -9 "$gone"; wait "$gone" 2>/dev/null
mp -p "$gone" -e info
assert_fail
assert_err "no process $gone"
assert_no_dump_dirs
