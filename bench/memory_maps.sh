#!/usr/bin/env bash
# memory_maps.sh - what `memory` costs on a process with MAPS mappings
# (bench/many_maps.c, 10,000 by default), against what users already run
# to see where RSS is: `pmap -X` and an awk summing smaps' Rss by mapping
# kind, each run REPS times, interleaved, in the same run.  memprof's
# `memory` reads smaps once for where RSS is, plus smaps_rollup, status and
# the allocator's figures (one stop), and then the diagnoses; `memory
# --interval` would read smaps a second time.  Prints median/p90/max in ms
# and the ratio of medians to each of the others.
set -u
: "${MEMPROF:?}" "${MANY_MAPS:?}"
MAPS=${MAPS:-10000}
REPS=${REPS:-15}
. "$(dirname "$0")/stats.sh"
bench_scratch memprof-bench-maps
"$MANY_MAPS" "$MAPS" >"$work/out" &
pid=$!
for _ in $(seq 200); do grep -q ready "$work/out" && break; sleep 0.05; done
grep -q ready "$work/out" || { echo "many_maps did not start"; exit 1; }
echo "process $pid: $(wc -l <"/proc/$pid/maps") mappings"

ms() {   # ms CMD...: the command's wall time in ms (its output dropped)
    local t0=${EPOCHREALTIME/[.,]/}
    "$@" >/dev/null 2>&1 || echo "failed: $*" >&2
    echo $(( (${EPOCHREALTIME/[.,]/} - t0) / 1000 ))
}
awk_smaps() {
    awk '/^[0-9a-f]+-[0-9a-f]+ / { anon = ($6 == "") } /^Rss:/ { if (anon) a += $2; else f += $2 }
         END { print a, f }' "/proc/$pid/smaps"
}
: >"$work/memprof"; : >"$work/pmap"; : >"$work/awk"
for _ in $(seq "$REPS"); do
    ms "$MEMPROF" -q -p "$pid" -e memory >>"$work/memprof"
    ms pmap -X "$pid" >>"$work/pmap"
    ms awk_smaps >>"$work/awk"
done
"$MEMPROF" -q -p "$pid" -e memory | sed -n '/^where RSS is/p;/^diagnoses/p'
printf '%-28s %8s %8s %8s %5s\n' "" median p90 max n
for w in memprof pmap awk; do
    read -r med p90 max n < <(stats <"$work/$w")
    printf '%-28s %8s %8s %8s %5s\n' "$w (ms)" "$med" "$p90" "$max" "$n"
    eval "med_$w=$med"
done
awk -v m="$med_memprof" -v p="$med_pmap" -v a="$med_awk" 'BEGIN {
    printf "memprof memory / pmap -X: x%.2f; / awk over smaps: x%.2f (medians)\n",
        m / (p ? p : 1), m / (a ? a : 1) }'
