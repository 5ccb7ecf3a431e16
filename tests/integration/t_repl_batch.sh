# The session's batch modes and exit statuses, without a process:
# -e in order, -x FILE, stdin, first failure stops with 1, usage errors 2.
. "$SRCDIR/tests/integration/lib.sh"

mp -e 'help prof' -e 'help dump'
check "help prof; help dump: succeeds" mp_ok
check "help prof; help dump: shows usage: prof on|off" out_has '^usage: prof on\|off'
# -e commands run in the order given
first=$(grep -n '^usage: prof' <<<"$OUT" | cut -d: -f1)
second=$(grep -n '^usage: dump' <<<"$OUT" | cut -d: -f1)
check "-e commands run in the order given" [ "$first" -lt "$second" ]

# the first failing command stops the batch with status 1
mp -e 'help' -e 'nonesuch' -e 'help dump'
check "a failing command: exit 1" [ "$RC" -eq 1 ]
check "help; nonesuch; help dump: says unknown command 'nonesuch'" err_has "unknown command 'nonesuch'"
check "help; nonesuch; help dump: does not show usage: dump" out_lacks '^usage: dump'

# a script file, with comments and blank lines
printf '# a comment\n\nhelp quit\nsleep 0\n' >script.mp
mp -x script.mp
check "-x script.mp: succeeds" mp_ok
check "-x script.mp: shows usage: quit" out_has '^usage: quit'
mp -x missing.mp
check "a missing script: exit 1" [ "$RC" -eq 1 ]
check "-x missing.mp: says cannot read script missing.mp" err_has 'cannot read script missing.mp'

# stdin that is not a terminal is a batch too
OUT=$(printf 'help sleep\nbogus\nhelp quit\n' | "$MEMPROF" 2>"$WORK/err"); RC=$?
check "stdin batch with a failure: exit 1" [ "$RC" -eq 1 ]
check "stdin batch: the first command ran" out_has '^usage: sleep'
check "stdin batch: stops at the failure" out_lacks '^usage: quit'

# quit ends the batch early with success
OUT=$(printf 'quit\nbogus\n' | "$MEMPROF" 2>&1); RC=$?
check "quit ends the batch with exit 0" [ "$RC" -eq 0 ]

# usage errors exit 2
mp --no-such-option
check "a bad option: exit 2" [ "$RC" -eq 2 ]
mp -p
check "-p without a pid: exit 2" [ "$RC" -eq 2 ]

# commands that need a process say so
mp -e 'prof on'
check "prof on without a process: exit 1" [ "$RC" -eq 1 ]
check "prof on: says needs a process" err_has 'needs a process'
mp -e 'attach notapid'
check "attach notapid: exit 1" [ "$RC" -eq 1 ]
check "attach notapid: says not a process id" err_has 'not a process id'
# output that cannot be written is a failure, not a silent success
"$MEMPROF" -e help >/dev/full 2>"$WORK/full.err"; rc=$?
check "output to /dev/full: exit 1" [ "$rc" -eq 1 ]
check "output to /dev/full: says it cannot write" file_has "$WORK/full.err" 'cannot write the output'
