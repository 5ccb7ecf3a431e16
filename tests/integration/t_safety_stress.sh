# 200 rounds of prof on / prof off / dump against eight threads that
# allocate, free and verify every byte they wrote: nothing corrupts, the
# process keeps working, nothing is left stopped, traced or on disk.
. "$SRCDIR/tests/integration/lib.sh"

start_target stress8
toggles 200
# the workers' own count of verified blocks (main prints it every second)
checked_now() { awk '/^checked/ {n = $2} END {print n + 0}' "$TARGET_OUT"; }
before=$(checked_now)
mp -p "$PID" -x "$WORK/toggles"
assert_ok
sleep 1.2
grep -q CORRUPT "$TARGET_OUT" && die "target reported: $(grep CORRUPT "$TARGET_OUT")"
after=$(checked_now)
[ "$after" -gt "$before" ] || die "the workers stopped verifying blocks ($before, then $after)"
assert_untouched "$PID"
assert_no_dump_dirs
