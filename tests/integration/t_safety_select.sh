# A select() that memprof interrupts resumes with the time it had left:
# the kernel writes the time left back into the caller's timeval/timespec
# and restarts the call with it, so every stop would add its own length
# to the sleep (a 500 ms select borrowed over and over took p50 706 ms);
# memprof takes the time it held the thread off that value.  The target's
# main thread loops on select(0, ..., 500 ms) and prints each duration;
# it is borrowed over and over, and its selects are compared with those
# of the same run without memprof.  Each stop used to add its whole length
# to the select; now only the microseconds between the kernel writing the
# time left and memprof seeing the stop, and between the detach and the
# restart, remain (more under load): the p50 must exceed the baseline by
# less than half the time memprof held the thread per select, none may
# exceed it by 100 ms plus memprof's longest pause (one may straddle the
# deadline) as a whole timeout started again would, none may end early or
# fail.  memprof must really
# have held the thread 40 ms or more per select, or the check would prove
# nothing: how many dumps that takes depends on the machine's speed (80
# took 17 ms on one, 60 ms on another), so the session's length is
# calibrated first, doubling its dumps until one session holds the thread
# 60 ms, and grown again whenever a session of the measured ones falls
# short.
#
# Then memprof is killed mid-call (the call blocks on a FIFO): the thread
# restores itself from its signal frame, which cannot restart the select
# as the kernel would and used to start it over; it now returns EINTR
# with the time that was left in its timeval, which every caller of
# select must handle, and the program goes on selecting normally.
. "$SRCDIR/tests/integration/lib.sh"

# Every allocation sampled, from the start: the target's 4096 call paths
# make each dump hold the thread milliseconds (tests/targets/select_sleeper.c).
CONF=prof:true,prof_active:true,lg_prof_sample:0 start_target select_sleeper
nselects() { grep -c '^select ' "$TARGET_OUT"; }
# durations of select lines $1..$2 (1-based among select lines)
durations() { grep '^select ' "$TARGET_OUT" | sed -n "$1,$2p" | awk '{print $2}'; }
p50() { sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
maxof() { sort -n | tail -1; }

# Baseline: five selects with no memprof.
wait_until 10 "five selects without memprof" eval '[ "$(nselects)" -ge 5 ]'
base_p50=$(durations 1 5 | p50)

# Borrowed by sessions of dumps, one per select, each holding the thread
# 60 ms or more, until ten selects have run wholly under them.
ndumps=2
write_session() { for _ in $(seq "$ndumps"); do echo dump; done >"$WORK/dumps"; }
# One session; its stops are appended to $1 and its total hold (ms) set
# in HELD.
borrow() {
    MEMPROF_TRACE_PAUSES=1 mp -p "$PID" -x "$WORK/dumps"
    assert_ok
    grep "^pause tid=$PID " <<<"$ERR" >"$WORK/session.pauses"
    cat "$WORK/session.pauses" >>"$1"
    HELD=$(awk '{sub("us=", "", $3); s += $3} END {printf "%d", s / 1000}' "$WORK/session.pauses")
}
# A session that held the thread less than 60 ms: twice the dumps next time.
fit_session() {
    if [ "$HELD" -lt 60 ] && [ "$ndumps" -lt 40000 ]; then
        ndumps=$((ndumps * 2)); write_session
    fi
}
write_session
borrow "$WORK/calibration"
while [ "$HELD" -lt 60 ] && [ "$ndumps" -lt 40000 ]; do
    fit_session; borrow "$WORK/calibration"
done
echo "calibrated: $ndumps dumps hold the thread $HELD ms" >&2
first=$(($(nselects) + 2))
last=$((first + 9))
: >"$WORK/pauses"
sessions=0
while [ "$(nselects)" -le "$last" ] && [ "$sessions" -lt 100 ]; do
    n=$(nselects)
    borrow "$WORK/pauses"
    fit_session
    sessions=$((sessions + 1))
    wait_until 10 "the next select" eval '[ "$(nselects)" -gt "$n" ]'
done
[ "$(nselects)" -gt "$last" ] || die "the selects made no progress in $sessions sessions"
got_p50=$(durations "$first" "$last" | p50)
got_max=$(durations "$first" "$last" | maxof)
held_ms=$(awk '{sub("us=", "", $3); s += $3} END {printf "%d", s / 1000}' "$WORK/pauses")
longest_ms=$(awk '{sub("us=", "", $3); if ($3 + 0 > m) m = $3 + 0} END {printf "%d", m / 1000 + 1}' "$WORK/pauses")
selects_held=$(($(nselects) - first + 2))
echo "baseline p50 $base_p50 ms; borrowed: p50 $got_p50 max $got_max ms;" \
     "held $held_ms ms in $(wc -l <"$WORK/pauses") stops over $selects_held selects" >&2

held_per_select=$((held_ms / selects_held))
check "memprof held the thread 40 ms or more per select" [ "$held_per_select" -ge 40 ]
check "select p50 over the baseline by less than half the time held per select" \
    awk -v g="$got_p50" -v b="$base_p50" -v h="$held_per_select" 'BEGIN { exit !(g < b + h / 2) }'
check "none restarted its whole timeout (baseline + 100 ms + longest pause)" \
    awk -v g="$got_max" -v b="$base_p50" -v l="$longest_ms" 'BEGIN { exit !(g < b + 100 + l) }'
check "no select early or failed" \
    awk '/^select / && ($2 < 500 || $3 != "rc=0") { bad = 1 } END { exit bad }' "$TARGET_OUT"
assert_untouched "$PID"

before=$(nselects)
start_blocked_dump
kill -9 "$MP"
wait "$MP" 2>/dev/null
cat "$WORK/dumpfifo" >/dev/null
wait_until 10 "the select memprof died in to return" eval '[ "$(nselects)" -gt "$before" ]'
rm -rf $(dump_dirs)     # what the killed memprof could not remove
line=$(grep '^select ' "$TARGET_OUT" | sed -n "$((before + 1))p")
echo "after the self-restore: $line" >&2
check "the self-restored select returned EINTR" grep -q 'rc=-1 errno=4 ' <<<"$line"
check "with the time it had left in its timeval" \
    awk '{ sub("left=", "", $5); exit !($5 + 0 > 0 && $5 + 0 < 500) }' <<<"$line"
wait_until 10 "two more selects" eval '[ "$(nselects)" -ge $((before + 3)) ]'
check "the next selects sleep their whole time and succeed" \
    awk -v b="$before" '/^select / { n++ } /^select / && n > b + 1 && n <= b + 3 && ($2 < 500 || $3 != "rc=0") { bad = 1 } END { exit bad }' "$TARGET_OUT"
assert_untouched "$PID"
assert_no_dump_dirs
