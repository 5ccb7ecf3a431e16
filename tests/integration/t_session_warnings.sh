# What memprof says before it interferes: a process started without
# prof:true (restart advice, and 'prof on' fails with exit 1), one whose own
# MALLOC_CONF already activated profiling, one that dumps by itself
# (lg_prof_interval), and a memprof without permission to trace.
. "$SRCDIR/tests/integration/lib.sh"

CONF=prof:false start_target session_idle
mp -p "$PID" -e info -e 'prof on' -e info
check "no opt.prof: prof on works" [ "$RC" -eq 0 ]
check "no opt.prof: says jemalloc's own profiling is off for good" err_has 'off for good \(opt.prof was false at start\)'
check "no opt.prof: memprof's sampler stands in" out_has "^profiling is now on \(was off\): memprof's sampler is in process $PID"
check "no opt.prof: the batch went on" [ "$(grep -c '^pid ' <<<"$OUT")" -eq 2 ]
mp -p "$PID" -e dump
check "no opt.prof: dump without the sampler fails" mp_failed
check "no opt.prof: dump says 'prof on' first" err_has "memprof's sampler is not in process $PID.*'prof on' puts it in"
check "no opt.prof: the process is still alive" alive "$PID"

CONF=prof:true,prof_active:true start_target session_idle
mp -p "$PID" -e info
check "active from the start: info runs" mp_ok
check "active from the start: warns" err_has 'profiling is already active in this process'
check "active from the start: info shows it" out_has 'prof.active +true'

CONF=prof:true,prof_active:false,lg_prof_interval:40 start_target session_idle
mp -p "$PID" -e info
check "dumps by itself: info runs" mp_ok
check "dumps by itself: warns" err_has 'already dumps profiles by itself every 2\^40 bytes'
check "dumps by itself: info shows the interval" out_has 'opt.lg_prof_interval +40'

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
echo "unprivileged memprof: $out"
check "unprivileged: exit 1" [ "$rc" -eq 1 ]
check "unprivileged: gives the reason" grep -Eqi 'not permitted to trace' <<<"$out"
check "unprivileged: gives a remedy" grep -Eqi 'root|CAP_SYS_PTRACE|same user' <<<"$out"
check "unprivileged: the process is left untraced" untraced "$PID"
