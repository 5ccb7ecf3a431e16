# A thread spinning with known values in ymm0-14 (upper halves included),
# in general registers and in its red zone is stopped mid-loop many times:
# it must never notice.
. "$SRCDIR/tests/integration/lib.sh"

start_target avx_redzone
toggles 100
mp -p "$PID" -x "$WORK/toggles"
assert_ok
sleep 1
grep -q CORRUPT "$TARGET_OUT" && die "target reported: $(grep CORRUPT "$TARGET_OUT")"
assert_untouched "$PID"
[ "$(state_of "$PID")" = R ] || die "spinning target is not running"
assert_no_dump_dirs
