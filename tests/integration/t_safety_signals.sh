# Queued real-time signals keep arriving at the thread memprof stops; the
# ones it holds must be delivered again exactly once and in order.  The
# target counts what it sent, what its handler saw (in sequence) and how
# many were sent while memprof held its main thread in a stop: all three
# must be real, not 0 = 0.
. "$SRCDIR/tests/integration/lib.sh"

start_target signals
toggles 100
# memprof's own priority stays as it is (MEMPROF_STOP_PRIORITY=0): raised
# and on the thread's CPU, memprof makes each stop so short that the
# sender thread rarely runs inside one, and the test is about signals that
# arrive while the thread is held.
MEMPROF_STOP_PRIORITY=0 mp -p "$PID" -x "$WORK/toggles"
check "memprof ran 100 rounds" mp_ok
kill -USR2 "$PID"
wait_until 5 "the target's signal report" grep -q '^SIGNALS' "$TARGET_OUT"
report=$(grep -m1 '^SIGNALS' "$TARGET_OUT")
echo "target: $report"
field() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<<"$report"; }
check "every signal handled once, in order" grep -q '^SIGNALS OK ' <<<"$report"
check "signals were sent" [ "$(field sent)" -gt 0 ]
check "as many handled as sent" [ "$(field handled)" -eq "$(field sent)" ]
check "some were sent while memprof held the thread" [ "$(field held)" -gt 0 ]
check "the process is left running, untraced" untouched "$PID"
check "no dump directory left" no_dump_dirs
