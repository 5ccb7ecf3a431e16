#!/usr/bin/env bash
# trend.sh - memprof's trend over a long series: DUMPS synthetic dumps
# (default 720: 12 hours at one a minute) of a process with STACKS call
# paths (default 14000), every stack churning and one leaking steadily
# (bench/gen_series.py).  Prints memprof's wall time and peak RSS for
# trend over them (as a saved run: memprof DIR), whether it ranked the
# leak first, and jeprof --text on one dump as the anchor.
#
#   MEMPROF=build/memprof GEN=build/bench/gen_stacks bash bench/trend.sh [DUMPS [STACKS]]
#
# OLD_MEMPROF=path runs another memprof build on the same series too.
# Needs /usr/bin/time (Debian package `time`) and jeprof (libjemalloc-dev);
# about 3.7 MB of disk per dump of 14000 stacks.
set -u
: "${MEMPROF:?set MEMPROF to the memprof binary}"
: "${GEN:?set GEN to the gen_stacks binary}"
[ -x /usr/bin/time ] || { echo "trend.sh: /usr/bin/time is missing: apt-get install time" >&2; exit 1; }
command -v jeprof >/dev/null || { echo "trend.sh: jeprof is missing: apt-get install libjemalloc-dev" >&2; exit 1; }
here=$(cd "$(dirname "$0")" && pwd)
dumps=${1:-720} stacks=${2:-14000}
work=$(mktemp -d /tmp/bench-trend.XXXXXX)
trap 'rm -rf "$work"' EXIT

MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:0 "$GEN" "$stacks" "$work/base.heap" \
    || { echo "trend.sh: gen_stacks $stacks failed" >&2; exit 1; }
python3 "$here/gen_series.py" "$work/base.heap" "$work/run" "$dumps" --run bench \
    || { echo "trend.sh: gen_series.py failed" >&2; exit 1; }
echo "series: $dumps dumps of $(grep -c '^@' "$work/base.heap") stacks, $(du -sm "$work/run" | cut -f1) MB on disk"

status=0
# run LABEL CMD...: stdout in $work/LABEL.out; prints time and peak RSS.
run() {
    local label=$1; shift
    /usr/bin/time -f '%e %M' -o "$work/$label.time" "$@" >"$work/$label.out" 2>"$work/$label.err" \
        || { echo "trend.sh: $label failed:" >&2; tail -5 "$work/$label.err" >&2; status=1; return; }
    read -r secs kb <"$work/$label.time"
    printf '%-34s %8s s %8s MiB\n' "$label" "$secs" $((kb / 1024))
}
leak_first() {   # the first call-site row is the leak: steady, 100% monotonic
    python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))["call_sites"][0]
ok = s["steady"] and s["monotonic"] == 1.0 and s["values"][-1] > s["values"][0]
print("  leak ranked first:", "yes" if ok else "NO", "(%s)" % " < ".join(s["stack"][:4]))
sys.exit(0 if ok else 1)' "$1" || status=1
}
run "memprof trend ($dumps dumps)" "$MEMPROF" -q "$work/run" -e 'trend 5 --json'
leak_first "$work/memprof trend ($dumps dumps).out"
if [ -n "${OLD_MEMPROF:-}" ]; then
    run "old memprof trend ($dumps dumps)" "$OLD_MEMPROF" -q "$work/run" -e 'trend 5 --json'
    cmp -s "$work/memprof trend ($dumps dumps).out" "$work/old memprof trend ($dumps dumps).out" \
        && echo "  the same answer" || { echo "  answers DIFFER"; status=1; }
fi
run "memprof top (one dump)" "$MEMPROF" -q "$work/run/dump0001.heap" -e 'top'
run "jeprof --text (one dump)" jeprof --text "$GEN" "$work/run/dump0001.heap"
echo "goal: trend over 720 dumps of 14k stacks in <= 300 MiB and <= 30 s, the leak first"
exit $status
