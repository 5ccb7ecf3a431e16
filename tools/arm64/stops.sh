#!/usr/bin/env bash
# tools/arm64/stops.sh - a figure, not a test: how long memprof stops the
# one thread it borrows, measured in the arm64 guest (lane.sh runs it after
# the tests).  On the heartbeat target, N prof on/off toggles (2N stops,
# each timed by attach/ itself with MEMPROF_TRACE_PAUSES=1, from
# PTRACE_INTERRUPT to the return of PTRACE_DETACH, as bench/pause.sh does);
# prints "arm64 stops: ..." with their median, p99 and max.
# Run in the build directory: MEMPROF and TARGETS default to its build/.
set -u
N=${N:-200}
MEMPROF=${MEMPROF:-$PWD/build/memprof} TARGETS=${TARGETS:-$PWD/build/targets}
work=$(mktemp -d /tmp/memprof-stops.XXXXXX)
pid=
trap '[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
MALLOC_CONF=prof:true,prof_active:false "$TARGETS/heartbeat" >"$work/hb" 2>"$work/hb.err" &
pid=$!
for _ in $(seq 600); do    # up to 60 s for its first line under TCG
    [ -s "$work/hb" ] && break
    kill -0 "$pid" 2>/dev/null || { echo "arm64 stops: heartbeat exited: $(cat "$work/hb.err")"; exit 1; }
    sleep 0.1
done
for _ in $(seq "$N"); do printf 'prof on\nprof off\n'; done >"$work/script"
t0=$SECONDS
MEMPROF_TRACE_PAUSES=1 "$MEMPROF" -p "$pid" -x "$work/script" >/dev/null 2>"$work/err" ||
    { echo "arm64 stops: memprof failed: $(tail -3 "$work/err")"; exit 1; }
grep -E '^pause .* calls=1 ' "$work/err" | grep -v refused | sed -E 's/.* us=([0-9.]+) .*/\1/' | sort -n |
    awk -v s=$((SECONDS - t0)) '{ a[NR] = $1 } END {
        if (NR == 0) { print "arm64 stops: none traced"; exit 1 }
        p99 = int(NR * 0.99); if (p99 < 1) p99 = 1
        printf "arm64 stops: %d in %d s, median %d us, p99 %d us, max %d us\n", NR, s, a[int((NR + 1) / 2)], a[p99], a[NR] }'
