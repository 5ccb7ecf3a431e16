#!/usr/bin/env bash
# profile save DIR and memprof DIR (issue 9, item 5): a run's series is
# written as the bytes jemalloc wrote (the same bytes 'dump FILE' saves,
# and jeprof reads them), with build-ids and a manifest; 'memprof DIR' and
# 'load DIR' read it back offline as the same series with the same times,
# for top, trend and the rest.  A directory that is not empty, a manifest
# naming a file outside its directory, and a dump file that is missing are
# refused.
. "$SRCDIR/tests/integration/lib.sh"

CONF=prof:true,prof_active:false,lg_prof_sample:12 start_target slow_leak

# Dumps taken by hand, saved by 'dump FILE' and by 'profile save' (the
# session's dumps are the default series when none is in a run).
mp -q -p "$PID" -e 'prof on' -e 'sleep 1' -e "dump $WORK/a.heap" -e 'sleep 1' \
    -e "dump $WORK/b.heap" -e "profile save $WORK/manual" -e 'prof off'
check "profile save of the session's dumps succeeds" mp_ok
check "it says where and how to read it back" out_has "^saved session: 2 dumps in $WORK/manual"
check "the saved bytes are those 'dump FILE' wrote (dump1)" cmp -s "$WORK/a.heap" "$WORK/manual/dump1.heap"
check "the saved bytes are those 'dump FILE' wrote (dump2)" cmp -s "$WORK/b.heap" "$WORK/manual/dump2.heap"
check "the directory is private (0700)" [ "$(stat -c %a "$WORK/manual")" = 700 ]
check "build-ids are beside each dump" file_has "$WORK/manual/dump1.heap.buildids" '^[0-9a-f]{40} /'

# A run, saved, read back.
mp -q -p "$PID" -e 'profile start --duration 6s --every 1s --name leakrun' -e 'profile wait' \
    -e 'trend leakrun 2' -e "profile save $WORK/run" -e "profile save $WORK/run"
check "the second save into the same (now full) directory is refused" \
    holds eval '[ "$RC" -eq 1 ] && assert_err "is not empty"'
online_span=$(grep -Eo '^Trend of series leakrun: [0-9]+ dumps over [0-9]+ s' <<<"$OUT")
check "online trend of the run" [ -n "$online_span" ]
check "the manifest names the series, the pid and each dump" \
    holds eval 'python3 -c "
import json, sys
m = json.load(open(\"$WORK/run/manifest.json\"))
assert m[\"schema\"] >= 1 and m[\"series\"] == \"leakrun\" and m[\"pid\"] == $PID, m
assert len(m[\"dumps\"]) >= 6 and all(d[\"file\"] == d[\"name\"] + \".heap\" for d in m[\"dumps\"])
assert m[\"executable\"].endswith(\"slow_leak\") and m[\"objects\"]
"'
check "jeprof reads a saved dump" \
    holds eval 'jeprof --text "$TARGETS/slow_leak" "$WORK/run/leakrun.3.heap" 2>/dev/null | grep -q "^Total:"'

mp -q "$WORK/run" -e 'dumps' -e 'top leakrun 3' -e 'trend 2'
check "memprof DIR reads the run back" mp_ok
check "its dumps keep their names" out_has '^leakrun\.1 '
check "top SERIES reads its latest dump" out_has '^Total: .*\(leakrun\.[0-9]+, '
check "trend over it has the same dumps and span as online" \
    out_has "^${online_span}"
mp -q -e "load $WORK/run" -e 'trend leakrun 2'
check "load DIR does the same" out_has "^${online_span}"

# Untrusted directories.
mkdir "$WORK/evil"
cp "$WORK/run/leakrun.1.heap" "$WORK/evil/"
cat >"$WORK/evil/manifest.json" <<EOF
{"schema": 1, "series": "evil", "dumps": [{"name": "x", "file": "../a.heap", "taken_at": 1}]}
EOF
mp -q "$WORK/evil" -e dumps
check "a manifest naming ../a.heap is refused" \
    holds eval '[ "$RC" -ne 0 ] && assert_err "dump file .\.\./a\.heap. memprof will not open"'
cat >"$WORK/evil/manifest.json" <<EOF
{"schema": 1, "series": "evil", "dumps": [{"name": "one", "file": "leakrun.1.heap", "taken_at": 1},
 {"name": "two", "file": "missing.heap", "taken_at": 2}]}
EOF
mp -q -e "load $WORK/evil" -e dumps
check "a missing dump file is refused and nothing of the run stays loaded" \
    holds eval '[ "$RC" -ne 0 ] && assert_err "missing\.heap" && ! grep -q "^one " <<<"$OUT"'
echo '[1, 2' >"$WORK/evil/manifest.json"
mp -q "$WORK/evil"
check "a manifest that is not JSON is refused" \
    holds eval '[ "$RC" -ne 0 ] && assert_err "not a JSON object memprof wrote"'
check "the target lives on, untraced" untouched "$PID"
