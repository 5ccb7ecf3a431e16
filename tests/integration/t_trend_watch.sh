#!/usr/bin/env bash
# The live views (issue 9, item 3) on slow_leak: without a terminal,
# `top --watch 1 --count 3` prints 3 timestamped reports, the 2nd and 3rd
# with the growth since the first dump, and keeps only the view's first
# and latest dumps; `trend --watch 1 --count 4` ends with the trend of its
# 4 dumps.  At the prompt (a pseudo-terminal) `top --watch 1` redraws in
# place and Ctrl-C leaves the view, not the session: the next command
# works.  Offline, and with bad values, the views are refused.
. "$SRCDIR/tests/integration/lib.sh"
export HOME="$WORK" PYTHONPATH="$SRCDIR/tests/integration"

CONF=prof:true,prof_active:true,lg_prof_sample:12 start_target slow_leak

mp -q -p "$PID" -e 'top --watch 1 --count 3' -e 'dumps --json'
check "top --watch 1 --count 3 runs and ends" mp_ok
heads=$(grep -Ec '^=== [0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2} UTC top --watch 1: refresh [1-3] of 3 \(dump[0-9]+, series watch1\) ===$' <<<"$OUT")
check "top --watch: 3 timestamped reports" [ "$heads" -eq 3 ]
check "top --watch: the first is a plain top" \
    holds eval 'awk "/refresh 1 of 3/ { getline; print; exit }" <<<"$OUT" | grep -Eq "^Total: .* in use"'
check "top --watch: the others show the growth since the first dump" \
    [ "$(grep -Ec '^Growth: [-+]?[0-9.]+ ([KMG]i)?B since dump1$' <<<"$OUT")" -eq 2 ]
check "top --watch: with a column of each row's growth" \
    out_has '^ +flat +flat% +sum% +cum +cum% +flat grew +function$'
# churn_pool's growth column is its flat now less its flat in the first report.
grew_is_the_difference() {
python3 - "$OUT" <<'PY'
import re, sys
unit = {"B": 1, "KiB": 1024, "MiB": 2**20, "GiB": 2**30}
def val(v, u):
    return float(v) * unit[u]
reports = re.split(r"^=== .* ===$", sys.argv[1], flags=re.M)[1:]
first = re.search(r"^ *([-+]?[0-9.]+) (\S+) .* churn_pool$", reports[0], re.M)
last = re.search(r"^ *([-+]?[0-9.]+) (\S+) +\S+ +\S+ +\S+ \S+ +\S+ +([-+]?[0-9.]+) (\S+) +churn_pool$",
                 reports[-1], re.M)
then, now, grew = val(*first.groups()), val(*last.groups()[:2]), val(*last.groups()[2:])
print("churn_pool: %.0f then, %.0f now, grew %.0f" % (then, now, grew))
# Each figure is shown to one decimal of its unit: each may be off by half
# of that, so the difference may be off by the three halves together.
half = lambda v, u: 0.05 * unit[u]
slack = half(*first.groups()) + half(*last.groups()[:2]) + half(*last.groups()[2:])
assert abs(now - then - grew) <= slack, (then, now, grew, slack)
PY
}
check "top --watch: the growth column is the change since the first dump" grew_is_the_difference
check "top --watch: rows of the target's functions" out_has ' churn_(pool|large)$'
check "top --watch: the view's first and latest dumps stay, in series watch1" \
    [ "$(jf '[(x["name"]) for x in d["dumps"]]')" = "['dump1', 'dump3']" ]

mp -q -p "$PID" -e 'trend --watch 1 --count 4 3'
check "trend --watch 1 --count 4 runs and ends" mp_ok
check "trend --watch: 4 timestamped reports" \
    [ "$(grep -Ec '^=== .* UTC trend --watch 1: refresh [1-4] of 4 \(dump[0-9]+, series watch1\) ===$' <<<"$OUT")" -eq 4 ]
check "trend --watch: the first waits for a second dump" out_has '^\(a trend needs a second dump'
check "trend --watch: the last is the trend of the view's 4 dumps" \
    out_has '^Trend of series watch1: 4 dumps over [0-9]+ s \(dump1 \.\. dump4\)$'
check "trend --watch: with the target's functions" out_has ' (leak_slowly|churn_pool|churn_large)$'

# At the prompt: redrawn in place; Ctrl-C leaves the view, the session goes on.
check "top --watch at the prompt redraws; Ctrl-C leaves the view, not the session" \
    python3 - "$MEMPROF" "$PID" <<'PY'
import sys
from pty_prompt import Prompt
memprof, pid = sys.argv[1], sys.argv[2]
p = Prompt([memprof, "-p", pid])
p.expect(rb"memprof> ")
p.send("top --watch 1\r")
p.expect(rb"\x1b\[H\x1b\[2Jtop --watch 1: pid \d+, .* refresh 1 \(dump1, series watch1\); Ctrl-C leaves")
p.expect(rb"Total: .* in use")
p.expect(rb"\x1b\[H\x1b\[2Jtop --watch 1: pid \d+, .* refresh 2 \(dump2, series watch1\)")
p.expect(rb"Growth: ")
p.expect(rb"\x1b\[H\x1b\[2Jtop --watch 1: pid \d+, .* refresh 3 ")
p.send("\x03")
m = p.expect(rb"left the live view; its dumps are in series watch1\r\n(.*)memprof> ")
assert b"interrupted" not in m.group(1), m.group(1)   # leaving is no error
p.command("dumps", rb"dump1 .*\r\n(dump[0-9]+ .*\r\n)?")
p.command("top 3 dump1", rb"Total: .* in use")
p.send("quit\r")
status = p.wait()
assert status == 0, (status, p.buf[-1500:])
PY
check "the process lives on, untraced" untouched "$PID"

# Refusals.
mp -q -p "$PID" -e "dump $WORK/one.heap"
mp -q "$WORK/one.heap" -e 'top --watch 1'
check "offline top --watch is refused" \
    holds eval '[ "$RC" -eq 1 ] && assert_err "top --watch takes fresh dumps, so it needs a process"'
mp -q "$WORK/one.heap" -e 'trend --watch 1 --count 2'
check "offline trend --watch is refused" holds eval '[ "$RC" -eq 1 ] && assert_err "needs a process"'
mp -q -p "$PID" -e 'top --watch 0'
check "--watch 0 is refused" holds eval '[ "$RC" -eq 1 ] && assert_err "from 0\.1 to 3600"'
mp -q -p "$PID" -e 'top --watch 1 --count 0'
check "--count 0 is refused" holds eval '[ "$RC" -eq 1 ] && assert_err "--count 0: give how many"'
mp -q -p "$PID" -e 'top --count 2'
check "--count without --watch is refused" holds eval '[ "$RC" -eq 1 ] && assert_err "--count goes with --watch"'
mp -q -p "$PID" -e 'top --watch 1 dump1'
check "top --watch with a dump name is refused" holds eval '[ "$RC" -eq 1 ] && assert_err "leave out the dump name"'
mp -q -p "$PID" -e 'trend --watch 1 watch1'
check "trend --watch with a series is refused" holds eval '[ "$RC" -eq 1 ] && assert_err "leave out .watch1."'
check "the process is still untouched" untouched "$PID"
