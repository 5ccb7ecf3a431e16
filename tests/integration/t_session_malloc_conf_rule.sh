# The MALLOC_CONF rule (issue 6 item 9): a process whose owner turned
# profiling on at start (prof_active:true) keeps it as set: prof off, prof
# sample and prof reset (and the mallctl writes behind them) are refused
# without --force; reading and dumping stay allowed.  The attach warning
# follows the live state, and tells profiling turned on at start from a
# change at run time (issue 13 item 3).
. "$SRCDIR/tests/integration/lib.sh"
err_has() { grep -Eq -- "$1" <<<"$ERR"; }
err_lacks() { ! grep -Eq -- "$1" <<<"$ERR"; }
out_has() { grep -Eq -- "$1" <<<"$OUT"; }

CONF=prof:true,prof_active:true start_target session_idle
mp -p "$PID" -e info
check "warns: the owner turned profiling on at start" err_has 'owner turned it on at start'

for cmd in 'prof off' 'prof sample 18' 'prof reset' 'mallctl prof.active false' 'mallctl prof.reset 18'; do
    mp -p "$PID" -e "$cmd"
    check "'$cmd' refused without --force" [ "$RC" -eq 1 ]
    check "'$cmd' names --force" err_has 'unless you add --force'
done
mp -p "$PID" -e 'mallctl prof.active' -e 'mallctl prof.lg_sample'
check "prof.active still on" out_has '^prof.active: true$'
check "rate unchanged" out_has '^prof.lg_sample: 19$'

mp -p "$PID" -e dump -e 'mallctl prof.gdump' -e 'prof on'
check "dumping, reading and prof on need no --force" [ "$RC" -eq 0 ]
check "the dump was taken" out_has '^dump1: '

mp -p "$PID" -e 'prof sample 18 --force' -e 'mallctl prof.lg_sample' -e 'prof reset --force' \
   -e 'prof sample 19 --force'
check "with --force the rate changes" out_has '^prof.lg_sample: 18$'
check "with --force the batch succeeds" [ "$RC" -eq 0 ]
mp -p "$PID" -e 'prof off --force'
check "prof off --force" out_has 'profiling is now off \(was on\)'

# the warning follows the live state: off now, so no "already active"
mp -p "$PID" -e info
check "no 'already active' warning once off" err_lacks 'already active'
check "says it was started active and turned off since" err_has 'turned off since'
mp -p "$PID" -e 'prof sample 18'
check "the rule still holds while off" err_has 'unless you add --force'
mp -p "$PID" -e 'prof on'
check "prof on gives the owner's setting back" out_has 'profiling is now on \(was off\)'

# profiling turned on at run time is told apart from the owner's setting
CONF=prof:true,prof_active:false start_target session_idle
mp -p "$PID" -e 'prof on'
mp -p "$PID" -e info
check "run-time change: said so" err_has 'turned on at run time'
check "run-time change: not blamed on the owner" err_lacks 'owner turned it on at start'
mp -p "$PID" -e 'prof off'
check "run-time change: prof off needs no --force" [ "$RC" -eq 0 ]
check "the targets are untouched" assert_untouched "$PID"
echo "malloc_conf rule ok"
