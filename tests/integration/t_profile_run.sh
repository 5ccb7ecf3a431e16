#!/usr/bin/env bash
# profile start/state/stop/wait (issue 9, item 1) on slow_leak, whose
# leak_slowly keeps 16 KiB/s among heavy churn: a 20 s run with --every 2s
# takes 10 dumps while 'profile' shows it running, trend ranks leak_slowly
# first and --fail-over stops the batch with status 3; prof.active and the
# rate are put back after a run, after 'profile stop', after SIGINT during
# 'profile wait' and after bad input (which changes nothing); the MALLOC_CONF
# rule; a process that exits during a run leaves its dumps usable.
# The counts and times a run reports are checked against what the same
# run says of its own clock (its elapsed time), never against how long a
# fixed sleep is assumed to let it run on this machine: a run lasts its
# duration or more, never a bound above it.
. "$SRCDIR/tests/integration/lib.sh"

CONF=prof:true,prof_active:false,lg_prof_sample:12 start_target slow_leak
LEAK=$PID

# prof_settings PID: "active lg_sample" read by a fresh session
prof_settings() {
    local out
    out=$("$MEMPROF" -q -p "$1" -e 'mallctl prof.active' -e 'mallctl prof.lg_sample' 2>/dev/null)
    echo "$(awk '/^prof.active:/ {print $2}' <<<"$out") $(awk '/^prof.lg_sample:/ {print $2}' <<<"$out")"
}
settings_are() {   # settings_are PID "false 12"
    local now
    now=$(prof_settings "$1")
    [ "$now" = "$2" ] && return 0
    echo "  prof.active and lg_sample are '$now', not '$2'" >&2
    return 1
}
check "before: profiling off, lg_sample 12" settings_are "$LEAK" "false 12"

# ---- a whole run ----
mp -q -p "$LEAK" -e 'profile start --duration 20s --every 2s' -e 'profile' \
    -e 'sleep 3' -e 'profile --json' -e 'profile wait' -e 'profile' -e 'dumps' \
    -e 'mallctl prof.active' -e 'trend run1' -e 'trend run1 --fail-over 1KiB/h'
check "the batch ends at --fail-over with status 3" [ "$RC" -eq 3 ]
check "start says the run's id, interval and end" \
    out_has '^run1 started in process [0-9]+: a dump every 2\.0 s for 20\.0 s \(until'
check "state while running: id, running, elapsed of 20 s, time left" \
    out_has '^run1: running, process [0-9]+, started [0-9:]+, [0-9.]+ s of 20\.0 s \([0-9.]+ s left\)'
export JF_DEFS='r = d["run"]'
# After 3 s asleep, a dump every 2 s: at least one taken, no more than
# its elapsed time allows; what remains is the rest of the 20 s.
check "--json state after 3 s: running, 1 dump or more (one per 2 s elapsed at most), the rest of 20 s remaining" \
    [ "$(jf 'r["state"] == "running" and 3 <= r["elapsed"] and 1 <= r["dumps"] <= r["elapsed"] // 2 and abs(r["remaining"] + r["elapsed"] - 20) < 0.01 and r["latest"]["name"] == "run1.%d" % r["dumps"]')" = True ]
check "after wait: completed with 10 dumps" out_has '^  dumps every 2\.0 s: 10 taken'
check "state says how it ended" out_has '^  ended: its duration ran out'
check "the series lists run1.1 .. run1.10" \
    holds eval '[ "$(grep -cE "^run1\.([1-9]|10) " <<<"$OUT")" -eq 10 ]'
check "prof.active is put back to false at the end of the run" out_has '^prof.active: false'
check "the end is said on stderr (after 20 s or more)" err_has 'run1 completed \(its duration ran out\) in process [0-9]+ after (2[0-9]|[3-9][0-9]|[1-9][0-9]{2,})\.[0-9] s: 10 dumps; prof.active put back as before'
fn_row=$(awk '/^Trend of series run1/ {t=1} t && / function$/ { getline; print; exit }' <<<"$OUT")
echo "first function row: $fn_row"
check "trend run1: leak_slowly is the first function, about 100% monotonic" \
    grep -Eq '^ +\+[0-9.]+ [KM]iB/h +(9[0-9]|100)% .* leak_slowly$' <<<"$fn_row"
check "trend --fail-over names leak_slowly" err_has 'faster than --fail-over 1\.0 KiB/h: leak_slowly'
check "after the run: off, lg_sample 12, as before" settings_are "$LEAK" "false 12"

# ---- stop early, with a rate of its own ----
mp -q -p "$LEAK" -e 'profile start --duration 10m --every 1s --sample 14 --force --name quick' \
    -e 'sleep 2.5' -e 'profile stop' -e 'profile' -e 'mallctl prof.lg_sample' -e 'top quick 3'
check "stop: the batch succeeds" mp_ok
check "stop: the run says stopped" out_has '^quick: stopped, process'
# A dump every second for the 2.5 s slept and more (however long the
# session took to get there): 2 or more periodic dumps, one per second
# run at most, and a last one at the stop.
stop_s=$(sed -En 's/^quick: stopped, process [0-9]+, started [0-9:]+, ([0-9]+)\.[0-9] s.*/\1/p' <<<"$OUT")
taken=$(sed -En 's/^  dumps every 1\.0 s, sampling every 2\^14 bytes: ([0-9]+) taken$/\1/p' <<<"$OUT")
echo "quick: stopped after ${stop_s:-?} s with ${taken:-?} dumps"
periodic_fits() { [ -n "$taken" ] && [ "$((taken - 1))" -ge 2 ] && [ "$((taken - 1))" -le "${stop_s:-0}" ]; }
check "stop: 2 dumps or more (one per second run at most) and a last one are kept" periodic_fits
check "stop: the rate is back to 12 at once" out_has '^prof.lg_sample: 12'
check "stop: top quick reads the series' latest dump" out_has "^Total: .* \\(quick\\.${taken:-none}, "
check "stop: the end says the rate was put back" err_has 'quick stopped \(profile stop\) .*prof.active and the rate put back as before'
check "after stop: off, lg_sample 12" settings_are "$LEAK" "false 12"

# ---- bad input: refused, nothing changed ----
refused() {   # refused "what" "message RE" commands...
    local what=$1 re=$2; shift 2
    local args=() c
    for c in "$@"; do args+=(-e "$c"); done
    mp -q -p "$LEAK" "${args[@]}"
    check "$what: refused" holds eval '[ "$RC" -eq 1 ] && assert_err "$re"'
    check "$what: nothing changed in the process" settings_are "$LEAK" "false 12"
}
refused "--duration 5x" "'5x' is not a duration" 'profile start --duration 5x'
refused "--every longer than --duration" '--every \(10 s\) is longer than --duration \(2 s\)' \
    'profile start --every 10s --duration 2s'
refused "a zero duration" "out of range" 'profile start --duration 0s'
refused "a run name of digits" "cannot name a run" 'profile start --name 123'
refused "--every 0.1s" "too often" 'profile start --every 100ms'
refused "an unknown subcommand" "unknown subcommand 'begin'" 'profile begin'
refused "profile stop without a run" "no run is running" 'profile stop'
refused "profile save of a series that does not exist" "no series named 'nosuch'" \
    "profile save $WORK/none nosuch"
check "a refused save makes no directory" [ ! -e "$WORK/none" ]
mp -q -p "$LEAK" -e 'profile start --duration 1m --every 5s' -e 'profile start --duration 10s'
check "a second start is refused, naming the running run" \
    holds eval '[ "$RC" -eq 1 ] && assert_err "profile start: run1 is still running in process [0-9]+"'
check "the end of the batch ends the first run and puts it back" \
    err_has 'run1 stopped \(memprof was asked to end|run1 stopped \(the session ended'
check "after the second start: off, lg_sample 12" settings_are "$LEAK" "false 12"

for change in 'prof off' 'prof sample 14 --force' 'mallctl prof.active false' 'mallctl prof.gdump true' 'jemalloc 0'; do
    mp -q -p "$LEAK" -e 'profile start --duration 1m --every 5s' -e "$change"
    check "during a run, '$change' is refused: the run controls profiling" \
        holds eval '[ "$RC" -eq 1 ] && assert_err "profiling run run1 controls profiling in process [0-9]+ until it ends"'
    check "after the refused '$change': off, lg_sample 12" settings_are "$LEAK" "false 12"
done

mp -q -p "$LEAK" -e 'profile start --duration 1m --every 5s' -e 'detach' -e 'dumps'
check "detach during a run ends it with a last dump, its settings put back" \
    holds eval 'assert_ok && assert_err "run1 stopped \(detach\) .*: 1 dump; prof.active put back as before" && assert_out "^run1\.1 "'
check "after detach: off, lg_sample 12" settings_are "$LEAK" "false 12"

# ---- SIGINT during profile wait ends the run and puts it back ----
"$MEMPROF" -p "$LEAK" -e 'profile start --duration 5m --every 1s' -e 'profile' \
    -e 'profile wait' >"$WORK/sigint.out" 2>"$WORK/sigint.err" &
MP=$!
wait_until 20 "the run to show its state" file_has "$WORK/sigint.out" '^run1: running'
kill -INT "$MP"
wait_until 10 "memprof to end after SIGINT" sh -c "! kill -0 $MP 2>/dev/null"
wait "$MP"; rc=$?
check "SIGINT: memprof exits non-zero" [ "$rc" -ne 0 ]
check "SIGINT: the run is said stopped and put back" \
    file_has "$WORK/sigint.err" 'run1 stopped \(memprof was asked to end\).*prof.active put back as before'
check "SIGINT: off, lg_sample 12 again" settings_are "$LEAK" "false 12"
check "the target lives on, untraced" untouched "$LEAK"

# ---- the MALLOC_CONF rule ----
CONF=prof:true,prof_active:true start_target slow_leak
OWNED=$PID
mp -q -p "$OWNED" -e 'profile start --duration 2s --every 1s'
check "owner's profiling: a run is refused without --force" \
    holds eval '[ "$RC" -eq 1 ] && assert_err "owner turned profiling on at its start.*--force"'
mp -q -p "$OWNED" -e 'profile start --duration 2s --every 1s --force' -e 'profile wait' \
    -e 'mallctl prof.active'
check "with --force the run completes" out_has '^prof.active: true'

# ---- the process exits during a run ----
CONF=prof:true,prof_active:false,lg_prof_sample:12 start_target slow_leak
DOOMED=$PID
"$MEMPROF" -q -p "$DOOMED" -e 'profile start --duration 5m --every 1s' -e 'sleep 2.5' \
    -e 'profile' -e 'profile wait' -e 'profile' -e 'top run1 3' \
    >"$WORK/exit.out" 2>"$WORK/exit.err" &
MP=$!
wait_until 30 "two dumps before the process dies" file_has "$WORK/exit.out" ': ([2-9]|[1-9][0-9]+) taken'
kill -KILL "$DOOMED"
wait_until 20 "memprof to finish its batch" sh -c "! kill -0 $MP 2>/dev/null"
wait "$MP"; rc=$?
check "exit: the batch goes on to the end" [ "$rc" -eq 0 ]
check "exit: the run ends as 'process ended'" file_has "$WORK/exit.out" '^run1: process ended'
check "exit: the dumps taken stay usable" file_has "$WORK/exit.out" '^Total: .* \(run1\.[2-9], '
check "exit: memprof says the process is gone" file_has "$WORK/exit.err" 'run1 process ended \(.*(exit|kill|gone|died)'

# ---- at the prompt: the run goes on while the prompt waits for keys ----
export HOME="$WORK" PYTHONPATH="$SRCDIR/tests/integration"
check "prompt: a run completes while the prompt idles; Ctrl-C in 'profile wait' stops one" \
    python3 - "$MEMPROF" "$LEAK" <<'PY'
import sys
from pty_prompt import Prompt
memprof, pid = sys.argv[1], sys.argv[2]
p = Prompt([memprof, "-p", pid])
p.expect(rb"memprof> ")
p.command("profile start --duration 3s --every 1s", rb"run1 started in process \d+")
p.send("dum")                                   # a half-typed line
# nothing more typed: the prompt wakes for the run's dumps and its end
p.expect(rb"run1 completed \(its duration ran out\) in process \d+ after (3|[4-9]|\d\d+)\.\d s: 3 dumps; "
         rb"prof.active put back as before")        # its 3 s or more
p.expect(rb"memprof> dum")                      # the line being typed is drawn again
p.send("ps\r")
p.expect(rb"run1\.1 .*\r\n.*run1\.2 .*\r\n.*run1\.3 ")
p.expect(rb"memprof> ")
p.command("profile start --duration 10m --every 1s --name long", rb"long started")
p.send("profile wait\r")
p.expect(rb"profile wait\r\n")
p.wait_syscall("clock_nanosleep")   # the wait is running
p.send("\x03")
p.expect(rb"long stopped \(Ctrl-C during 'profile wait'\) in process \d+ .*prof.active put back as before")
p.command("mallctl prof.active", rb"prof.active: false")
p.send("quit\r")
status = p.wait()
assert status == 0, (status, p.buf[-1500:])
PY
check "after the prompt: off, lg_sample 12" settings_are "$LEAK" "false 12"
