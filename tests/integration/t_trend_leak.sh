#!/usr/bin/env bash
# trend (issue 9, item 2) on a slow leak hidden in heavy churn: slow_leak's
# leak_slowly keeps 16 KiB/s while churn_pool and churn_large swing by MiB.
# Ten dumps 2 s apart: trend ranks leak_slowly first among functions and
# call sites, about 100% monotonic; --json says the same; --fail-over
# 1GiB/h passes and 1KiB/h stops the batch with exit status 3 naming
# leak_slowly.  The saved dumps give the same first row offline.  A series
# that does not exist, a single dump and a bad rate are refused.
. "$SRCDIR/tests/integration/lib.sh"

CONF=prof:true,prof_active:false,lg_prof_sample:12 start_target slow_leak
# The leak is sampled from prof on: a first pause so the first dump holds some.
script=$WORK/dumps.mp
{
    dump_series 10 "$WORK"
    echo "trend"
    echo "trend --json"
    echo "trend --fail-over 1GiB/h"
    echo "trend --fail-over 1KiB/h"
    echo "dumps"
} >"$script"
t0=$EPOCHREALTIME
mp -q -p "$PID" -x "$script"
# The session's own length bounds the span of its dumps (nine 2 s sleeps
# and the dumps themselves, however long those take on this machine).
session_s=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%d", b - a + 1 }')
check "the batch stops at --fail-over 1KiB/h with exit status 3" [ "$RC" -eq 3 ]
check "--fail-over names leak_slowly" \
    err_has '^memprof: .*trend: [0-9]+ rows? grows? faster than --fail-over 1\.0 KiB/h: leak_slowly \(\+[0-9.]+ [KM]iB/h, (9[0-9]|100)% mono\)'
check "--fail-over names its call site too" err_has 'call site leak_slowly < leaker < '
check "the batch ran no command after the failing one" out_lacks '^NAME +STACKS'

# The first trend (text): the header, then the functions' table.
text=$(awk '/^Trend of/ { n++ } n == 1' <<<"$OUT")
first_row() {   # first_row TITLE: the first row under the table headed TITLE
    awk -v t="$1" '$0 ~ "rate +mono +share .* " t { getline; print; exit }' <<<"$text"
}
fn_row=$(first_row 'function$')
site_row=$(first_row 'call site')
echo "first function row: $fn_row"
echo "first call-site row: $site_row"
span=$(sed -En 's/^Trend of the session.s dumps: 10 dumps over ([0-9]+) s.*/\1/p' <<<"$text")
span_fits() { [ "${span:-0}" -ge 18 ] && [ "${span:-0}" -le "$session_s" ]; }
check "text: 10 dumps over the 18 s slept or more (${span:-no span}), within the session's $session_s s" span_fits
check "text: leak_slowly is the first function" grep -Eq ' leak_slowly$' <<<"$fn_row"
check "text: its rate is positive and it is about 100% monotonic" \
    grep -Eq '^ +\+[0-9.]+ [KM]iB/h +(9[0-9]|100)% ' <<<"$fn_row"
check "text: the first call site is leak_slowly's, innermost first" \
    grep -Eq ' leak_slowly < leaker < start_thread' <<<"$site_row"
# The functions' table: leak_slowly, the line, then the churn.
table=$(awk '/ function$/ { on = 1; next } on && /^$/ { exit } on' <<<"$text")
check "text: the churn is below the line of what is steady" \
    grep -Eq '^leak_slowly;\(below: not steady enough to tell from noise\);(churn_(pool|large);){2}$' \
    <<<"$(awk '/\(below/ { print "(below: not steady enough to tell from noise)"; next } { print $NF }' <<<"$table" | tr '\n' ';')"

export JF_DEFS='f = d["functions"]; s = d["call_sites"]'
check "--json: leak_slowly first" [ "$(jf 'f[0]["function"]')" = leak_slowly ]
check "--json: monotonic >= 0.9 and steady" [ "$(jf 'f[0]["monotonic"] >= 0.9 and f[0]["steady"]')" = True ]
check "--json: a rate between 1 and 100 MiB/h (16 KiB/s is 56 MiB/h)" \
    [ "$(jf '2**20 < f[0]["rate_per_hour"] < 100 * 2**20')" = True ]
check "--json: 10 points, values rising, one per dump" \
    [ "$(jf 'd["points"] == 10 == len(f[0]["values"]) == len(d["dumps"]) and f[0]["values"][-1] > f[0]["values"][0]')" = True ]
check "--json: schema and the call site's stack" \
    [ "$(jf 'd["schema"] >= 1 and s[0]["stack"][:2] == ["leak_slowly", "leaker"]')" = True ]
check "--json: the churn is not steady" \
    [ "$(jf 'any(r["function"].startswith("churn_") and not r["steady"] for r in f)')" = True ]
check "the process lives on, untraced" untouched "$PID"

# Offline: the saved dumps (times from the files), in order.
files=()
for i in 1 2 3 4 5 6 7 8 9 10; do files+=("$WORK/d$i.heap"); done
mp -q "${files[@]}" -e 'trend 3'
check "offline trend runs" mp_ok
check "offline: leak_slowly is the first function again" \
    grep -Eq '^ +\+[0-9.]+ [KM]iB/h +(9[0-9]|100)% .* leak_slowly$' <<<"$(awk '/ function$/ { getline; print; exit }' <<<"$OUT")"
mp -q "${files[@]}" -e 'trend --fail-over 10MiB/min'
check "offline: --fail-over above the leak's rate passes" mp_ok

# Refusals.
mp -q "${files[@]}" -e 'trend nosuchseries'
check "a series that does not exist is refused" \
    holds eval '[ "$RC" -eq 1 ] && assert_err "no series named .nosuchseries."'
mp -q "$WORK/d1.heap" -e 'trend'
check "one dump is refused" holds eval '[ "$RC" -eq 1 ] && assert_err "only one dump .*at least 2"'
mp -q "${files[@]}" -e 'trend --fail-over 5x'
check "--fail-over 5x is refused (status 1, not 3)" \
    holds eval '[ "$RC" -eq 1 ] && assert_err "fail-over .5x. .*e\.g\. 10MiB/h"'
mp -q "${files[@]}" -e 'trend --fail-over 10MiB'
check "--fail-over without a time unit is refused" holds eval '[ "$RC" -eq 1 ] && assert_err "no time unit"'
mp -q "${files[@]}" -e 'trend --alloc'
check "trend --alloc is refused" holds eval '[ "$RC" -eq 1 ] && assert_err "alloc does not apply"'
mp -q "$WORK/d1.heap" "$WORK/d1.heap" -e 'trend'
check "two dumps taken at the same time are refused" holds eval '[ "$RC" -eq 1 ] && assert_err "same time"'
