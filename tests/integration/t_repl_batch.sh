# The session's batch modes and exit statuses, without a process:
# -e in order, -x FILE, stdin, first failure stops with 1, usage errors 2.
. "$SRCDIR/tests/integration/lib.sh"

mp -e 'help prof' -e 'help dump'
assert_ok
assert_out '^usage: prof on\|off'
# -e commands run in the order given
first=$(grep -n '^usage: prof' <<<"$OUT" | cut -d: -f1)
second=$(grep -n '^usage: dump' <<<"$OUT" | cut -d: -f1)
[ "$first" -lt "$second" ] || die "-e commands ran out of order"

# the first failing command stops the batch with status 1
mp -e 'help' -e 'nonesuch' -e 'help dump'
[ "$RC" -eq 1 ] || die "expected exit 1, got $RC"
assert_err "unknown command 'nonesuch'"
assert_no_out '^usage: dump'

# a script file, with comments and blank lines
printf '# a comment\n\nhelp quit\nsleep 0\n' >script.mp
mp -x script.mp
assert_ok
assert_out '^usage: quit'
mp -x missing.mp
[ "$RC" -eq 1 ] || die "missing script: expected exit 1, got $RC"
assert_err 'cannot read script missing.mp'

# stdin that is not a terminal is a batch too
OUT=$(printf 'help sleep\nbogus\nhelp quit\n' | "$MEMPROF" 2>"$WORK/err"); RC=$?
[ "$RC" -eq 1 ] || die "stdin batch: expected exit 1, got $RC"
grep -q '^usage: sleep' <<<"$OUT" || die "stdin batch did not run the first command"
! grep -q '^usage: quit' <<<"$OUT" || die "stdin batch went on after a failure"

# quit ends the batch early with success
OUT=$(printf 'quit\nbogus\n' | "$MEMPROF" 2>&1); RC=$?
[ "$RC" -eq 0 ] || die "quit then bogus: expected 0, got $RC"

# usage errors exit 2
mp --no-such-option
[ "$RC" -eq 2 ] || die "bad option: expected exit 2, got $RC"
mp -p
[ "$RC" -eq 2 ] || die "-p without PID: expected exit 2, got $RC"

# commands that need a process say so
mp -e 'prof on'
[ "$RC" -eq 1 ] || die "prof on without a process: expected 1"
assert_err 'needs a process'
mp -e 'attach notapid'
[ "$RC" -eq 1 ] || die "attach notapid: expected 1"
assert_err 'not a process id'
# output that cannot be written is a failure, not a silent success
"$MEMPROF" -e help >/dev/full 2>"$WORK/full.err"; rc=$?
[ "$rc" -eq 1 ] || die "writing to /dev/full: expected exit 1, got $rc"
grep -q 'cannot write the output' "$WORK/full.err" || die "no message for a failed write"
echo "batch modes ok"
