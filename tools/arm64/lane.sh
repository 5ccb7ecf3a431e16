#!/usr/bin/env bash
# tools/arm64/lane.sh - the arm64 CI lane: builds the arm64 root
# (sysroot.sh), cross-builds memprof and its test targets (build.sh) and runs
# a chosen subset of the integration tests with tests/integration/run.sh in
# an emulated arm64 machine (guest.sh).  Prints run.sh's report, ending with
# exactly one "N passed, M failed" line (tools/test.sh counts it; a step
# that fails before the tests counts as one failure), and the lane's wall
# time; then memprof's stop times in the guest (stops.sh).  TESTS="t_a.sh
# t_b.sh" runs others instead of the subset.
set -u
here=$(cd "$(dirname "$0")" && pwd)
start=$(date +%s)
# The subset (issue 24), each chosen for what only a real arm64 run shows:
#   t_safety_syscalls    attach, prof on/off/dump x20 on a profiling jemalloc,
#                        calls into a thread asleep in nanosleep and in read()
#                        (restart: the sleep is not shortened, no EINTR)
#   t_safety_midcall     SIGKILL of the target mid-call; memprof signalled
#                        mid-call (the thread restores itself); SIGSTOP
#   t_safety_signals     queued real-time signals arriving during the calls
#   t_sampler_glibc      the heap sampler on a glibc malloc target (-O2, no
#                        frame pointers), its dumps analysed offline
#   t_analysis_views     offline analysis of a jemalloc dump (arm64 DWARF)
#   t_stats_summary      stats: jemalloc's figures read by mallctl calls
#   t_memory_purge       memory and purge on jemalloc (RSS given back)
#   t_glibc_purge        glibc malloc named; its stats (malloc_info) and purge
#                        (malloc_trim)
#   t_recent_leak        recent: jemalloc 5.3's recent allocations, live ones
#   t_profile_run        runs: profiling for a while, dumps on a timer, the
#                        settings put back
TESTS=${TESTS:-t_safety_syscalls.sh t_safety_midcall.sh t_safety_signals.sh t_sampler_glibc.sh t_analysis_views.sh t_stats_summary.sh t_memory_purge.sh t_glibc_purge.sh t_recent_leak.sh t_profile_run.sh}
# Deadlines of the tests' waits (wait_until) stretch by SLOW: under TCG a
# process starts ~35x slower than on the host and python3 takes 2.5 s to
# start.  GUEST_LIMIT bounds the whole guest run.
SLOW=${MEMPROF_ARM64_SLOW:-4}
GUEST_LIMIT=${MEMPROF_ARM64_LIMIT:-1200}

step() {    # NAME CMD...: runs a step, its output kept; says how long it took
    local t0=$SECONDS
    if "${@:2}" >"$logdir/$1.log" 2>&1; then
        printf 'arm64 lane: %s done in %d s\n' "$1" $((SECONDS - t0))
        return 0
    fi
    printf 'arm64 lane: %s FAILED after %d s:\n' "$1" $((SECONDS - t0))
    tail -15 "$logdir/$1.log" | sed 's/^/    | /'
    return 1
}
finish() {    # the one counted line, then the wall time
    echo "$1"
    printf 'arm64 lane: wall time %d s\n' $(($(date +%s) - start))
    exit "$2"
}
logdir=$(mktemp -d /tmp/memprof-arm64-lane.XXXXXX)
trap 'rm -rf "$logdir"' EXIT

step sysroot bash "$here/sysroot.sh" || finish "0 passed, 1 failed" 1
step build bash "$here/build.sh" || finish "0 passed, 1 failed" 1
t0=$SECONDS
# After the tests, in the same guest, a figure: memprof's stop times there
# (stops.sh; not counted as a test).
bash "$here/guest.sh" -t "$GUEST_LIMIT" \
    "SLOW=$SLOW MEMPROF=\$PWD/build/memprof TARGETS=\$PWD/build/targets SRCDIR=\$PWD bash tests/integration/run.sh $TESTS; rc=\$?; bash tools/arm64/stops.sh; exit \$rc" \
    2>&1 | tee "$logdir/guest.log" | grep -v '^[0-9]* passed, [0-9]* failed$'
rc=${PIPESTATUS[0]}
printf 'arm64 lane: guest run %d s\n' $((SECONDS - t0))
line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$logdir/guest.log" | tail -1)
[ -n "$line" ] || finish "0 passed, 1 failed" 1
# run.sh's count; a guest that reported its line but ended badly (timeout,
# no status) adds one failure
if [ "$rc" -ne 0 ] && [ "${line#* passed, }" = "0 failed" ]; then
    finish "${line%% *} passed, 1 failed" 1
fi
finish "$line" "$rc"
