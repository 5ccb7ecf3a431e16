#!/usr/bin/env bash
# faults.sh - the cost of `faults` to the process it samples: fault_loop
# (32 MiB touched page by page, best of 9 rounds, in ns per fault) plain,
# while memprof's `faults` samples it (every 8 faults, the default; every
# fault), and while `perf record -e page-faults --call-graph dwarf` does
# (the same periods, perf's default 8 KiB stack copies), all in this one
# run, each sampler right after a plain round (the machine's speed drifts).
# Prints each figure and its ratio to the plain round before it.  Figures, not
# limits: nothing here passes or fails on speed.
set -u
: "${MEMPROF:?}" "${LOOP:?}"
work=$(mktemp -d /tmp/memprof-bench.XXXXXX)
pids=()
trap 'for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$work"' EXIT

# until DESC CMD...: CMD polled every 50 ms until it succeeds, for up to
# 30 s; then the run ends saying what it waited for.
until_true() {
    local desc=$1 deadline=$((SECONDS + 30)); shift
    until "$@"; do
        [ "$SECONDS" -lt "$deadline" ] || { echo "timed out waiting for $desc" >&2; exit 1; }
        sleep 0.05
    done
}
lines_at_least() { local n; n=$(grep -Ec -- "$2" "$1" 2>/dev/null); [ "${n:-0}" -ge "$3" ]; }
has_perf_events() { ls -l "/proc/$1/fd" 2>/dev/null | grep -q 'perf_event'; }

rounds=0
one_round() {
    rounds=$((rounds + 1))
    kill -USR1 "$loop"
    until_true "round $rounds" lines_at_least "$work/loop.out" '^ns_per_fault' "$rounds"
    ns=$(grep '^ns_per_fault' "$work/loop.out" | tail -1 | awk '{print $2}')
    [ -z "${base:-}" ] && base=$ns
    [ "$1" = warm-up ] && { base=; return; }
    printf '  %-46s %8.1f ns/fault   x%.2f\n' "$1" "$ns" \
        "$(awk -v a="$ns" -v b="$base" 'BEGIN {print a / b}')"
}

# while_sampling LABEL CMD...: one round while CMD (started in the
# background) has its events open; CMD is then stopped with SIGINT.
while_sampling() {
    local label=$1; shift
    "$@" >"$work/tool.out" 2>&1 &
    local tool=$!
    pids+=("$tool")
    until_true "$label to open its events" has_perf_events "$tool"
    one_round "$label"
    kill -INT "$tool" 2>/dev/null
    wait "$tool" 2>/dev/null
}

echo "== page faults (32 MiB touched a page at a time, -O2 without frame pointers)"
"$LOOP" >"$work/loop.out" 2>&1 &
loop=$!; pids+=("$loop")
until_true "fault_loop to start" lines_at_least "$work/loop.out" '^ready' 1
one_round warm-up
plain() { base=; one_round "nothing sampling"; }
plain
while_sampling "memprof faults (every 8 faults, the default)" \
    "$MEMPROF" -q -p "$loop" -e 'faults 60'
tail -3 "$work/tool.out" | sed 's/^/      /'
plain
while_sampling "perf record -c 8 --call-graph dwarf" \
    perf record -q -o "$work/perf.data" -e page-faults -c 8 --call-graph dwarf -p "$loop"
plain
while_sampling "memprof faults --period 1 (every fault)" \
    "$MEMPROF" -q -p "$loop" -e 'faults 60 --period 1'
plain
while_sampling "perf record -c 1 --call-graph dwarf" \
    perf record -q -o "$work/perf.data" -e page-faults -c 1 --call-graph dwarf -p "$loop"
exit 0
