# 200 rounds of prof on / prof off / dump against eight threads that
# allocate, free and verify every byte they wrote: nothing corrupts, the
# process keeps working, nothing is left stopped, traced or on disk.
. "$SRCDIR/tests/integration/lib.sh"

start_target stress8
toggles 200
before=$(grep -c '^checked' "$TARGET_OUT")
mp -p "$PID" -x "$WORK/toggles"
assert_ok
sleep 1.2
grep -q CORRUPT "$TARGET_OUT" && die "target reported: $(grep CORRUPT "$TARGET_OUT")"
after=$(grep -c '^checked' "$TARGET_OUT")
[ "$after" -gt "$before" ] || die "target stopped making progress"
assert_untouched "$PID"
assert_no_dump_dirs
