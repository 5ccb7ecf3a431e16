#!/usr/bin/env bash
# scrape.sh - what memprof serve's /metrics costs and how many processes
# one agent reads every 15 s on this machine.  Targets (light_alloc:
# shared libjemalloc; glibc_live: glibc malloc), half each, are started in
# steps of STEP up to MAX; at each step both agents scrape all of them REPS
# times, interleaved: one reading SCRAPE_PARALLEL processes at once (its
# default: twice the CPUs) and one reading them one after another
# (--scrape-parallel 1, what the agent did before).  PAR=N gives the first
# agent --scrape-parallel N instead of its default.  Each scrape sends
# Prometheus' header for a 15 s scrape_timeout.  Per step and agent: the
# scrape's wall time (median), the processes up, the agent's CPU per
# process (its own and its workers', from /proc/PID/stat), and what one
# process paid: the time one of its threads was stopped
# (memprof_target_stopped_seconds, median over processes) and the time the
# agent took for it (memprof_target_scrape_duration_seconds).  Last, the
# capacity for a 15 s interval: processes per scrape second at the largest
# step times 14.5 s (the budget the header gives), and the CPU bound
# (CPUs x 15 s / CPU per process); the smaller holds.
set -u
: "${MEMPROF:?}" "${TARGETS:?}"
STEP=${STEP:-32}
MAX=${MAX:-128}
REPS=${REPS:-3}
TIMEOUT=15
work=$(mktemp -d /tmp/memprof-bench.XXXXXX)
pids=()
trap 'for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$work"' EXIT

. "$(dirname "$0")/stats.sh"
mkdir "$work/bin"
cp "$TARGETS/light_alloc" "$TARGETS/glibc_live" "$work/bin/"
rules=(--target "exe=$work/bin/light_alloc" --target "exe=$work/bin/glibc_live")

# agent NAME ARGS...: an agent on a free port; its pid and URL in
# $work/NAME.pid, $work/NAME.url.
agent() {
    local name=$1; shift
    "$MEMPROF" serve --listen 127.0.0.1:0 --quiet "${rules[@]}" "$@" 2>"$work/$name.log" &
    pids+=("$!")
    echo "$!" >"$work/$name.pid"
    for _ in $(seq 200); do
        grep -qs "listening on" "$work/$name.log" && break
        sleep 0.05
    done
    grep -o 'listening on 127.0.0.1:[0-9]*' "$work/$name.log" |
        sed 's/listening on /http:\/\//' >"$work/$name.url"
}

start_targets() {
    local i p
    for i in $(seq "$1"); do
        if [ $((i % 2)) = 0 ]; then p=light_alloc; else p=glibc_live; fi
        MALLOC_CONF= "$work/bin/$p" >"$work/t.$i.$RANDOM" 2>&1 &
        pids+=("$!")
    done
}

# CPU ticks of the agent and its reaped workers.
cpu_ticks() { awk '{ print $14 + $15 + $16 + $17 }' "/proc/$1/stat"; }

# scrape NAME: one scrape; appends "wall up n stopped_median_us took_median_ms" to $work/NAME.rows
scrape() {
    local url pid wall c0 c1
    url=$(cat "$work/$1.url") pid=$(cat "$work/$1.pid")
    c0=$(cpu_ticks "$pid")
    wall=$(curl -s -o "$work/body" -w '%{time_total}' --max-time 60 \
        -H "X-Prometheus-Scrape-Timeout-Seconds: $TIMEOUT" "$url/metrics")
    c1=$(cpu_ticks "$pid")
    local up n stopped took
    up=$(grep -c '^memprof_target_up{.*} 1$' "$work/body")
    n=$(grep -c '^memprof_target_up{' "$work/body")
    stopped=$(awk '/^memprof_target_stopped_seconds\{/ { print $2 * 1e6 }' "$work/body" | stats | cut -d' ' -f1)
    took=$(awk '/^memprof_target_scrape_duration_seconds\{/ { print $2 * 1e3 }' "$work/body" | stats | cut -d' ' -f1)
    echo "$wall $up $n $stopped $took $((c1 - c0))" >>"$work/$1.rows"
}

agent par ${PAR:+--scrape-parallel "$PAR"}
agent seq --scrape-parallel 1
hz=$(getconf CLK_TCK)
cpus=$(nproc)
printf '%-5s %-12s %8s %6s %12s %12s %14s\n' procs agent "wall s" up "stopped us" "per-proc ms" "cpu ms/proc"
n=0
while [ "$n" -lt "$MAX" ]; do
    start_targets "$STEP"
    n=$((n + STEP))
    sleep 1         # the new targets print ready and settle
    rm -f "$work"/*.rows
    for _ in $(seq "$REPS"); do scrape par; scrape seq; done
    for a in par seq; do
        # Medians over the reps of every column.
        read -r wall up cnt stopped took ticks < <(for i in 1 2 3 4 5 6; do
            cut -d' ' -f"$i" "$work/$a.rows" | sort -g |
                awk '{ v[NR] = $1 } END { printf "%s ", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
            done; echo)
        cpu=$(awk -v t="$ticks" -v hz="$hz" -v n="$cnt" 'BEGIN { printf "%.1f", t * 1000 / hz / n }')
        printf '%-5s %-12s %8.2f %6s %12s %12s %14s\n' "$cnt" \
            "$([ $a = par ] && echo parallel || echo one-by-one)" "$wall" "$up" "$stopped" "$took" "$cpu"
        echo "$a $cnt $wall $cpu" >>"$work/last"
    done
done
echo
tail -2 "$work/last" | while read -r a cnt wall cpu; do
    awk -v a="$a" -v n="$cnt" -v w="$wall" -v c="$cpu" -v cpus="$cpus" 'BEGIN {
        wall_cap = int(n / w * 14.5); cpu_cap = int(cpus * 15000 / c)
        printf "%s: %d processes in %.2f s -> about %d per 15 s interval by wall time, %d by CPU (%d CPUs): capacity %d\n",
            (a == "par" ? "parallel" : "one-by-one"), n, w, wall_cap, cpu_cap, cpus, (wall_cap < cpu_cap ? wall_cap : cpu_cap) }'
done
