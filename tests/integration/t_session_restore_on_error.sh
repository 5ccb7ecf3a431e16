# A failed batch puts back what the session changed (issue 13 item 3):
# after prof on and prof sample, a failing command (or a stop signal, or a
# failing line of a stdin batch) leaves prof.active and the rate as they
# were, and stderr says so.  A batch that ends normally leaves profiling on
# on purpose and says so on stderr, with the command that turns it off.
# Decay times (issue 18: one rule for every setting) follow the same rule,
# set by 'decay' or by 'mallctl NAME VALUE'.
. "$SRCDIR/tests/integration/lib.sh"
err_has() { grep -Eq -- "$1" <<<"$ERR"; }
out_has() { grep -Eq -- "$1" <<<"$OUT"; }
state_is() {   # prof.active and prof.lg_sample of $PID
    local o
    o=$("$MEMPROF" -p "$PID" -e 'mallctl prof.active' -e 'mallctl prof.lg_sample' 2>/dev/null)
    grep -q "^prof.active: $1$" <<<"$o" && grep -q "^prof.lg_sample: $2$" <<<"$o"
}

start_target session_idle
check "starts off at 2^19" state_is false 19

mp -p "$PID" -e 'prof on' -e 'prof sample 15' -e 'mallctl no.such.name'
check "the batch fails with 1" [ "$RC" -eq 1 ]
check "it changed both before failing" out_has 'sampling every 2\^15'
check "prof.active and the rate are back" state_is false 19
check "stderr says what was put back" err_has 'put back what it changed'
check "stderr names prof.active" err_has 'put back.*prof.active false'
check "stderr names the rate" err_has 'put back.*rate 2\^19'

# a failing line of a stdin batch
OUT=$(printf 'prof on\nprof sample 16\nbogus\n' | "$MEMPROF" -p "$PID" 2>"$WORK/err"); RC=$?
ERR=$(cat "$WORK/err")
check "stdin batch fails with 1" [ "$RC" -eq 1 ]
check "stdin batch: put back" state_is false 19
check "stdin batch: says so" err_has 'put back what it changed'

# sigterm_during CMD DONE_RE: a batch of CMD then a long sleep, ended by
# SIGTERM once its output shows DONE_RE; its status in SIG_RC, its stderr
# in $WORK/sig.err.
sigterm_during() {
    "$MEMPROF" -p "$PID" -e "$1" -e 'sleep 60' >"$WORK/sig.out" 2>"$WORK/sig.err" &
    local mpid=$!
    wait_until 30 "'$1' done" grep -q "$2" "$WORK/sig.out"
    kill -TERM "$mpid"
    wait "$mpid"
    SIG_RC=$?
}

# a stop signal in the middle of a batch
sigterm_during 'prof on' 'profiling is now on'
check "SIGTERM: memprof ends" [ "$SIG_RC" -ne 0 ]
check "SIGTERM: prof.active put back" state_is false 19
check "SIGTERM: says so" grep -q 'put back what it changed' "$WORK/sig.err"

# a normal end leaves it on, and says so and how to turn it off
mp -p "$PID" -e 'prof on'
check "a normal end succeeds" [ "$RC" -eq 0 ]
check "profiling stays on" state_is true 19
check "stderr says it stays on and how to turn it off" err_has "stays on.*'prof off'"
mp -p "$PID" -e 'prof off'
check "profiling off again" state_is false 19
mp -p "$PID" -e 'prof on' -e 'prof off'
check "prof on then prof off: nothing to say" [ -z "$(grep 'stays' <<<"$ERR")" ]

# decay times: every arena's and new arenas' dirty and muzzy, as 'decay --json'
decay_now() {
    "$MEMPROF" -p "$PID" -e 'decay --json' 2>/dev/null | python3 -c '
import json, sys
a = json.load(sys.stdin)["arenas"]
print(" ".join(sorted({"%d/%d" % (x["dirty_decay_ms"], x["muzzy_decay_ms"]) for x in a})))'
}
decay0=$(decay_now)
check "decay: one pair of times before ($decay0)" grep -Eq '^-?[0-9]+/-?[0-9]+$' <<<"$decay0"
decay_is() { [ "$(decay_now)" = "$1" ]; }
mp -p "$PID" -e 'decay 500 700' -e 'mallctl no.such.name'
check "decay: the batch failed after setting them" out_has '500.*700'
check "decay: a failing batch puts them back" decay_is "$decay0"
check "decay: says so" err_has 'put back what it changed.*decay time'
mp -p "$PID" -e 'mallctl arenas.dirty_decay_ms 1234' -e 'mallctl no.such.name'
check "decay by mallctl: put back too" decay_is "$decay0"
sigterm_during 'decay 600' 'decay set'
check "decay, SIGTERM: memprof ends" [ "$SIG_RC" -ne 0 ]
check "decay, SIGTERM: put back" decay_is "$decay0"
mp -p "$PID" -e 'decay 800 900'
check "decay, normal end: stays" decay_is "800/900"
check "decay, normal end: says what stays" err_has 'decay times stay as this session set them'
undo=$(grep -o "memprof -p $PID -e 'decay -- [-0-9]* [-0-9]*'" <<<"$ERR" | sed -E "s/.*-e '(.*)'/\1/")
check "decay, normal end: names the command that puts them back" [ -n "$undo" ]
mp -p "$PID" -e "$undo"
check "decay: that command puts them back" decay_is "$decay0"

check "the target is untouched" assert_untouched "$PID"
echo "restore on error ok"
