# stats.sh - sourced by the benchmarks: summary figures of a list of numbers.

# "median pP max count" of the numbers on stdin, P the percentile given
# ("nan nan nan 0" for none).
stats_pct() {
    sort -n | awk -v p="$1" '{v[NR]=$1} END {
        if (NR == 0) { print "nan nan nan 0"; exit }
        med = NR % 2 ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2
        k = int((NR * p + 99) / 100); if (k < 1) k = 1
        printf "%.0f %.0f %.0f %d\n", med, v[k], v[NR], NR }'
}

# "median p90 max count".
stats() { stats_pct 90; }
# "median p99 max count".
stats_tail() { stats_pct 99; }

# load_start / load_stop: every CPU busy, one spinning process per CPU at
# normal priority (what a build or a busy server does to memprof); the
# spinners' pids in the caller's array hogs, for its exit trap.
load_start() {
    local i
    for i in $(seq "$(nproc)"); do (while :; do :; done) & hogs+=($!); done
    sleep 0.5
}
load_stop() {
    [ ${#hogs[@]} -gt 0 ] && kill "${hogs[@]}" 2>/dev/null
    wait "${hogs[@]}" 2>/dev/null
    hogs=()
}

# bench_scratch NAME: $work, a scratch directory /tmp/NAME.XXXXXX, and a
# trap that at exit kills the target ($pid) and the load ($hogs) and
# removes $work.
bench_scratch() {
    work=$(mktemp -d "/tmp/$1.XXXXXX")
    pid=
    hogs=()
    trap '[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; [ ${#hogs[@]} -gt 0 ] && kill "${hogs[@]}" 2>/dev/null
          wait 2>/dev/null; rm -rf "$work"' EXIT
}
