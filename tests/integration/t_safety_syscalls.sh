# A thread stopped inside nanosleep must sleep its full time after the
# call (restart, not EINTR); one blocked in read() on a FIFO must get the
# whole message later, with no EINTR.  Both programs are single-threaded,
# so memprof has to stop exactly that thread.
. "$SRCDIR/tests/integration/lib.sh"

start_target sleepers sleep
toggles 20
mp -p "$PID" -x "$WORK/toggles"
assert_ok
# two more whole sleeps (1.5 s each) after the session, none early
n=$(grep -c '^sleeps' "$TARGET_OUT")
for i in $(seq 80); do
    grep -q "^sleeps $((n + 2))\$" "$TARGET_OUT" && break
    grep -q 'EARLY\|BAD' "$TARGET_OUT" && break
    sleep 0.1
done
grep -q 'EARLY\|BAD' "$TARGET_OUT" && die "$(grep 'EARLY\|BAD' "$TARGET_OUT")"
grep -q "^sleeps $((n + 2))\$" "$TARGET_OUT" || die "sleeper made no progress"
assert_untouched "$PID"

mkfifo "$WORK/fifo"
start_target sleepers read "$WORK/fifo"
mp -p "$PID" -x "$WORK/toggles"
assert_ok
check_reader "$WORK/fifo"
assert_untouched "$PID"
assert_no_dump_dirs
