#!/usr/bin/env bash
# sampler.sh - the cost of memprof's heap sampler to the process it is in,
# against the same process without it and with heaptrack attached at run
# time (heaptrack -p: what people use today for an unprepared process),
# all measured in this one run:
#   1. alloc_loop: ns per malloc/free pair (best of 5 rounds of a million),
#      plain, sampler at the default rate (2^19), sampler at 2^12, after
#      'prof off' (the inert region), heaptrack;
#   2. redis-server started plainly (Debian's: jemalloc without prof:true)
#      under redis-benchmark (SET/GET of 256 bytes over 100,000 keys, 50
#      clients): requests per second without and with the sampler, and
#      the top of the sampler's profile.
# Prints each figure and its ratio to the plain one.  Figures, not limits:
# nothing here passes or fails on speed.
set -u
: "${MEMPROF:?}" "${LOOP:?}"
work=$(mktemp -d /tmp/memprof-bench.XXXXXX)
pids=()
trap 'exec 3>&- 2>/dev/null; for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$work"' EXIT

wait_for() {    # wait_for FILE REGEX [COUNT]
    local n=${3:-1}
    for _ in $(seq 600); do
        [ "$(grep -Ec -- "$2" "$1" 2>/dev/null)" -ge "$n" ] && return 0
        sleep 0.05
    done
    echo "timed out waiting for /$2/ in $1" >&2
    exit 1
}

# one_round LABEL: a timed batch in the loop, its figure printed.
rounds=0
one_round() {
    rounds=$((rounds + 1))
    kill -USR1 "$loop"
    wait_for "$work/loop.out" '^ns_per_pair' "$rounds"
    ns=$(grep '^ns_per_pair' "$work/loop.out" | tail -1 | awk '{print $2}')
    [ -z "${base:-}" ] && base=$ns
    [ "$1" = "warm-up (not counted)" ] && base=
    printf '  %-34s %8.2f ns/pair   x%.2f\n' "$1" "$ns" "$(awk -v a="$ns" -v b="$base" 'BEGIN {print a / b}')"
}

echo "== malloc/free pairs (glibc malloc, -O2 without frame pointers)"
"$LOOP" >"$work/loop.out" 2>&1 &
loop=$!; pids+=("$loop")
wait_for "$work/loop.out" '^ready'
one_round "warm-up (not counted)"
base=
one_round "no sampler"
mkfifo "$work/cmds"
"$MEMPROF" -p "$loop" <"$work/cmds" >"$work/mp.out" 2>&1 &
mp=$!; pids+=("$mp")
exec 3>"$work/cmds"
echo 'prof on' >&3
wait_for "$work/mp.out" "sampler is in process"
one_round "sampler, every 2^19 bytes"
echo 'prof sample 12' >&3
wait_for "$work/mp.out" "samples forgotten"
one_round "sampler, every 2^12 bytes"
echo 'prof off' >&3
wait_for "$work/mp.out" "profiling is now off"
exec 3>&-
wait "$mp"
one_round "after prof off (inert region)"
if command -v heaptrack >/dev/null; then
    (cd "$work" && exec heaptrack -p "$loop" -o "$work/ht") >"$work/ht.log" 2>&1 &
    ht=$!; pids+=("$ht")
    wait_for "$work/ht.log" 'heaptrack output will be written|injecting|attaching' || true
    sleep 2     # heaptrack gives no sign that its library is in
    one_round "heaptrack -p (runtime attach)"
    kill -INT "$ht" 2>/dev/null
else
    echo "  heaptrack not installed: no anchor"
fi

echo "== redis-server (Debian's, jemalloc without prof:true) under redis-benchmark"
if command -v redis-server >/dev/null && command -v redis-benchmark >/dev/null; then
    port=$((20000 + RANDOM % 20000))
    redis-server --port "$port" --save '' --appendonly no >"$work/redis.log" 2>&1 &
    rpid=$!; pids+=("$rpid")
    wait_for "$work/redis.log" 'Ready to accept'
    bench() {
        redis-benchmark -p "$port" -q -n "${REQS:-200000}" -c 50 -r 100000 -t set,get -d 256 2>/dev/null | tr '\r' '\n' |
            awk -F'[: ]+' '/requests per second/ {s += $2; n++} END {printf "%.0f", s / n}'
    }
    bench >/dev/null    # warm up (and fill 100,000 keys: a live heap to sample)
    plain=$(bench)
    printf '  %-34s %8s req/s\n' "no sampler" "$plain"
    mkfifo "$work/rcmds"
    "$MEMPROF" -p "$rpid" <"$work/rcmds" >"$work/rmp.out" 2>&1 &
    pids+=($!)
    exec 4>"$work/rcmds"
    echo 'prof on' >&4
    wait_for "$work/rmp.out" "sampler is in process"
    with=$(bench)
    printf '  %-34s %8s req/s   x%.3f\n' "sampler, every 2^19 bytes" "$with" \
        "$(awk -v a="$with" -v b="$plain" 'BEGIN {print a / b}')"
    echo 'dump' >&4
    echo 'top 3' >&4
    exec 4>&-
    wait_for "$work/rmp.out" "took its sampler out"
    grep -A4 '^Total' "$work/rmp.out" | sed 's/^/    /'
else
    echo "  redis-server or redis-benchmark not installed"
fi
