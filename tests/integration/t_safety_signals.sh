# Queued real-time signals keep arriving at the thread memprof stops; the
# ones it holds must be delivered again exactly once and in order.
. "$SRCDIR/tests/integration/lib.sh"

start_target signals
toggles 100
mp -p "$PID" -x "$WORK/toggles"
assert_ok
kill -USR2 "$PID"
for i in $(seq 50); do grep -q '^SIGNALS' "$TARGET_OUT" && break; sleep 0.1; done
grep -q '^SIGNALS OK' "$TARGET_OUT" || die "$(grep '^SIGNALS' "$TARGET_OUT" || echo no report)"
assert_untouched "$PID"
assert_no_dump_dirs
