# stats.sh - sourced by the benchmarks: summary figures of a list of numbers.

# "median p90 max count" of the numbers on stdin ("nan nan nan 0" for none).
stats() {
    sort -n | awk '{v[NR]=$1} END {
        if (NR == 0) { print "nan nan nan 0"; exit }
        med = NR % 2 ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2
        k = int((NR * 9 + 9) / 10); if (k < 1) k = 1
        printf "%.0f %.0f %.0f %d\n", med, v[k], v[NR], NR }'
}
