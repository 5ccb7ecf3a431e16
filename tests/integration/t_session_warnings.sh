# What memprof says before it interferes: a process started without
# prof:true (restart advice, and 'prof on' fails with exit 1), one whose own
# MALLOC_CONF already activated profiling, one that dumps by itself
# (lg_prof_interval), and a memprof without permission to trace.
. "$SRCDIR/tests/integration/lib.sh"

CONF=prof:false start_target session_idle
mp -p "$PID" -e info -e 'prof on' -e info
[ "$RC" -eq 1 ] || die "prof on without opt.prof: expected exit 1, got $RC"
assert_err 'opt.prof is false'
assert_err 'heap profiling is not enabled in this process'
assert_err 'MALLOC_CONF=prof:true,prof_active:false'
[ "$(grep -c '^pid ' <<<"$OUT")" -eq 1 ] || die "the batch went on after the failure"
mp -p "$PID" -e dump
assert_fail
assert_err 'not enabled'
alive "$PID" || die "target died"

CONF=prof:true,prof_active:true start_target session_idle
mp -p "$PID" -e info
assert_ok
assert_err 'profiling is already active in this process'
assert_out 'prof.active +true'

CONF=prof:true,prof_active:false,lg_prof_interval:40 start_target session_idle
mp -p "$PID" -e info
assert_ok
assert_err 'already dumps profiles by itself every 2\^40 bytes'
assert_out 'opt.lg_prof_interval +40'

# an unprivileged memprof against a root process: refused before stopping
# anything, with the reason and a remedy
# (run as root: the test suite needs it).  The binary is copied where
# nobody can run it: the checkout may sit under a 0700 home.
[ "$(id -u)" -eq 0 ] || die "this test must run as root"
CONF=prof:true,prof_active:false start_target session_idle
bindir=$(mktemp -d /tmp/memprof-nobody.XXXXXX)   # not under $WORK (0700)
chmod 755 "$bindir"
cp "$MEMPROF" "$bindir/memprof"
out=$(setpriv --reuid=nobody --regid=nogroup --clear-groups "$bindir/memprof" -p "$PID" -e info 2>&1); rc=$?
rm -rf "$bindir"
[ "$rc" -eq 1 ] || die "unprivileged attach: expected exit 1, got $rc: $out"
grep -Eqi 'not permitted to trace' <<<"$out" || die "no permission reason: $out"
grep -Eqi 'root|CAP_SYS_PTRACE|same user' <<<"$out" || die "no remedy: $out"
[ "$(tracer_of "$PID")" = 0 ] || die "left traced"
echo "warnings ok"
