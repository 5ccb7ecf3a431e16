#!/usr/bin/env bash
# A long series keeps memprof's memory bounded (issue 22, item 1): a
# dump's parsed profile stays in memory only for the last ones used, the
# others are read again from their file (a dump memprof took: its copy in
# the session's private spool directory; a file read: that file).  Checked
# here: trend over 400 synthetic dumps peaks at about the memory of 50
# (each parsed dump held would add over 1 MiB) and still ranks the one
# steady leak first; a saved run of them re-opens; the spool is 0700 and
# gone at the end; a spool removed or damaged under memprof, and a file
# read that changed or vanished, give a clear error naming the dump, the
# file and what to do, and a run saved before is whole.
. "$SRCDIR/tests/integration/lib.sh"

[ -x /usr/bin/time ] || die "/usr/bin/time is missing: apt-get install time"

# ---- a long synthetic series ----

MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:0 \
    "$TARGETS/gen_stacks" 5000 "$WORK/base.heap" >/dev/null
python3 "$SRCDIR/bench/gen_series.py" "$WORK/base.heap" "$WORK/s50" 50 --run long50
python3 "$SRCDIR/bench/gen_series.py" "$WORK/base.heap" "$WORK/s400" 400 --run long400

# peak_kb DIR CMD: memprof running CMD over DIR; its peak RSS (KiB) in KB,
# and OUT, ERR, RC.
peak_kb() {
    OUT=$(/usr/bin/time -f '%M' -o "$WORK/time" "$MEMPROF" -q "$1" -e "$2" 2>"$WORK/mp.stderr")
    RC=$?
    ERR=$(cat "$WORK/mp.stderr")
    KB=$(tail -1 "$WORK/time")
}
peak_kb "$WORK/s50" 'trend 3 --json'
kb50=$KB json50=$OUT
peak_kb "$WORK/s400" 'trend 3 --json'
kb400=$KB
check "trend over 400 dumps succeeds" mp_ok
echo "peak RSS: trend over 50 dumps $kb50 KiB, over 400 $kb400 KiB"
# Held parsed, 350 more dumps of 5000 stacks would add some 450 MiB; the
# trend's own table adds 8 bytes per row and dump (about 30 MiB here).
check "trend's memory does not grow with the dumps (400 within 2x of 50)" \
    [ "$kb400" -lt $((2 * kb50)) ]
check "the steady leak is the first call site" holds eval 'python3 -c "
import json, sys
t = json.loads(sys.argv[1])
sites = t[\"call_sites\"]
assert sites[0][\"steady\"] and sites[0][\"monotonic\"] == 1.0, sites[0]
assert sites[0][\"values\"][-1] > sites[0][\"values\"][0]
assert not any(s[\"steady\"] for s in sites[1:]), sites[1]
" "$OUT"'
check "with 50 dumps too" holds eval 'python3 -c "
import json, sys
assert json.loads(sys.argv[1])[\"call_sites\"][0][\"steady\"]
" "$json50"'

peak_kb "$WORK/s50" 'diff dump0001 dump0050'
kb_top50=$KB
peak_kb "$WORK/s400" 'diff dump0001 dump0400'
kb_top400=$KB
echo "peak RSS: diff over 50 dumps $kb_top50 KiB, over 400 $kb_top400 KiB"
check "a saved run of 400 dumps re-opens (memprof DIR)" mp_ok
check "loading and viewing 400 dumps peaks within 1.5x of 50" \
    [ "$kb_top400" -lt $((kb_top50 * 3 / 2)) ]
mp -q -e "load $WORK/s400" -e 'dumps' -e 'top dump0017 3'
check "load DIR lists all 400 dumps" holds eval '[ "$(grep -c "^dump0" <<<"$OUT")" -eq 400 ]'
check "an old dump is read again for top" out_has '^Total: .*\(dump0017, '

# A file read that vanished or changed: named, with what to do.
cp -a "$WORK/s50" "$WORK/gone"
# The listing first; once it is out, a file removed, then trend.
feed() {
    echo 'dumps'
    wait_until 30 "the series to be loaded" [ -e "$WORK/gone.loaded" ]
    rm "$WORK/gone/dump0007.heap"
    echo 'trend'
}
{ feed | "$MEMPROF" -q "$WORK/gone" >"$WORK/gone.out" 2>"$WORK/gone.err"; } &
session=$!
wait_until 30 "memprof to list the dumps" grep -q '^dump0050 ' "$WORK/gone.out"
touch "$WORK/gone.loaded"
wait "$session"
ERR=$(cat "$WORK/gone.err")
check "a vanished file: trend names the dump and the file" \
    err_has "dump0007: cannot read $WORK/gone/dump0007\.heap again \(No such file or directory\)"
check "... and says what to do" err_has 'Put the file back as it was, or load the files again'

# ---- dumps memprof took: the spool ----

CONF=prof:true,prof_active:false,lg_prof_sample:12 start_target slow_leak
spool_tmp=$WORK/tmp
mkdir "$spool_tmp"

# A run saved with --save, then its spool removed under memprof.
feed_removed() {
    echo "profile start --duration 2s --every 0.5s --name r --save $WORK/kept"
    echo 'profile wait'
    wait_until 60 "the run to be saved" [ -e "$WORK/kept/manifest.json" ]
    stat -c %a "$spool_tmp"/memprof-dumps.* >"$WORK/spool.mode"
    rm -rf "$spool_tmp"/memprof-dumps.*
    echo 'top r 3'
    echo "profile save $WORK/again"
}
feed_removed | TMPDIR=$spool_tmp "$MEMPROF" -q -p "$PID" >"$WORK/rm.out" 2>"$WORK/rm.err"
RC=$?
ERR=$(cat "$WORK/rm.err")
OUT=$(cat "$WORK/rm.out")
check "the spool directory is private (0700)" [ "$(cat "$WORK/spool.mode")" = 700 ]
check "the latest dump, still parsed, is shown" out_has '^Total: .*\(r\.[0-9]+, '
check "profile save then fails (exit 1)" [ "$RC" -eq 1 ]
check "... naming the dump, its copy and what happened" \
    err_has "profile save: r\.1: its copy $spool_tmp/memprof-dumps\.[A-Za-z0-9]+/1\.heap\.z cannot be read \(No such file or directory\)"
check "... saying what to do" err_has "take new dumps .* 'load DIR'"
check "... and writing nothing" [ ! -e "$WORK/again" ]
mp -q "$WORK/kept" -e 'dumps' -e 'trend r 2'
check "the run saved before is whole and reads back" \
    holds eval 'assert_ok && assert_out "^Trend of series r: [0-9]+ dumps"'

# A copy damaged under memprof.
feed_damaged() {
    echo "profile start --duration 2s --every 0.5s --name d"
    echo 'profile wait'
    wait_until 60 "the run's dumps" [ -e "$WORK/d.ended" ]
    printf 'not deflate' >"$(echo "$spool_tmp"/memprof-dumps.*)/2.heap.z"
    echo 'trend d 2'
}
{ feed_damaged | TMPDIR=$spool_tmp "$MEMPROF" -q -p "$PID" >"$WORK/dmg.out" \
    2>"$WORK/dmg.err"; echo $? >"$WORK/dmg.rc"; } &
session=$!
wait_until 60 "the run to end" grep -q 'd completed' "$WORK/dmg.err"
touch "$WORK/d.ended"
wait "$session"
ERR=$(cat "$WORK/dmg.err")
check "a damaged copy: trend fails" [ "$(cat "$WORK/dmg.rc")" -eq 1 ]
check "... naming the dump and its copy" \
    err_has "d\.2: its copy $spool_tmp/memprof-dumps\.[A-Za-z0-9]+/2\.heap\.z is damaged"
check "the spool is removed at the end of each session" \
    holds eval '[ -z "$(ls -A "$spool_tmp")" ]'

# memprof SIGKILLed with dumps in its spool leaves the directory behind;
# the next memprof to take a dump there removes it (and its own at the end).
hold_dumps() {
    echo 'dump'
    wait_until 60 "the test's word" [ -e "$WORK/kill.done" ]
}
hold_dumps | TMPDIR=$spool_tmp "$MEMPROF" -q -p "$PID" >/dev/null 2>"$WORK/kill.err" &
killed=$!
wait_until 60 "the killed memprof's dump in its spool" \
    eval 'ls "$spool_tmp"/memprof-dumps.*/1.heap.z >/dev/null 2>&1'
left=$(echo "$spool_tmp"/memprof-dumps.*)
kill -KILL "$killed"
touch "$WORK/kill.done"
wait "$killed" 2>/dev/null
check "a SIGKILLed memprof leaves its spool" [ -d "$left" ]
TMPDIR=$spool_tmp mp -q -p "$PID" -e 'dump' -e 'dumps'
check "the next memprof's dump works" holds assert_ok
check "... and its spool sweep removed the one left behind" [ ! -e "$left" ]
check "... and nothing is left once it ended" holds eval '[ -z "$(ls -A "$spool_tmp")" ]'
