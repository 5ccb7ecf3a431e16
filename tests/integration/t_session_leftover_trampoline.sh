# A memprof that dies while a thread is in a call leaves its trampoline at
# the entry point, and that thread may still return into it to restore
# itself: a later session must use those bytes and never put the file's
# back (issue 6.1).  The state is made here as such a memprof leaves it:
# the trampoline's bytes written at the entry point.  Bytes that are
# neither the file's nor the trampoline are refused, never written over.
. "$SRCDIR/tests/integration/lib.sh"

start_target plain
orig=$(entry_bytes "$PID")
check "the entry point holds the file's code at first" test "$orig" != "$TRAMPOLINE"
entry_bytes "$PID" "$TRAMPOLINE" >/dev/null

mp -p "$PID" -e info -e 'prof on' -e dump -e 'mallctl stats.allocated' -e 'prof off'
check "a session runs over a left trampoline" test "$RC" = 0
check "info says the trampoline was left and is kept" \
    grep -q 'entry point .*holds the call trampoline an earlier memprof left' <<<"$OUT"
check "the left trampoline is still there after the session" \
    test "$(entry_bytes "$PID")" = "$TRAMPOLINE"
assert_text_intact "$PID" plain entry-kept
assert_untouched "$PID"

# The file's bytes back: a session then leaves the file's bytes.
entry_bytes "$PID" "$orig" >/dev/null
mp -p "$PID" -e info -e 'mallctl stats.allocated'
check "an untouched entry point is reported as the file's" \
    grep -q "entry point .*the executable's own bytes" <<<"$OUT"
check "and stays the file's" test "$(entry_bytes "$PID")" = "$orig"

# Something else there (a breakpoint): refused, left as it is.
changed=cc${orig:2}
entry_bytes "$PID" "$changed" >/dev/null
mp -p "$PID" -e 'mallctl stats.allocated'
check "a changed entry point is refused" test "$RC" != 0
check "the refusal says the code there was changed" \
    grep -q 'holds other bytes than its executable' <<<"$ERR"
check "the changed bytes are left as they are" test "$(entry_bytes "$PID")" = "$changed"
entry_bytes "$PID" "$orig" >/dev/null
assert_untouched "$PID"
