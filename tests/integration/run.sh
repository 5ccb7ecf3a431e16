#!/usr/bin/env bash
# Runs the integration tests: every tests/integration/t_*.sh (or the ones
# named as arguments), each in its own scratch directory.  A test passes by
# exiting 0; anything else is a failure (there is no "skip": CI installs
# everything a test needs).  Ends with the line "N passed, N failed".
set -u
here=$(cd "$(dirname "$0")" && pwd)
: "${MEMPROF:?set MEMPROF to the memprof binary}"
: "${TARGETS:?set TARGETS to the built test targets}"
export MEMPROF TARGETS SRCDIR="${SRCDIR:-$(cd "$here/../.." && pwd)}"
# Deadlines in wait_until stretch for a memprof built with sanitizers.
if [ -z "${SLOW:-}" ]; then
    if nm -D "$MEMPROF" 2>/dev/null | grep -q __asan_init || nm "$MEMPROF" 2>/dev/null | grep -q __asan_init; then SLOW=4; else SLOW=1; fi
fi
export SLOW

if [ $# -gt 0 ]; then tests=("$@"); else tests=("$here"/t_*.sh); fi
pass=0 fail=0 failed=()
for t in "${tests[@]}"; do
    case "$t" in /*) ;; *) [ -f "$t" ] || t="$here/$t" ;; esac
    name=$(basename "$t" .sh)
    work=$(mktemp -d /tmp/memprof-test.XXXXXX)
    mkdir "$work/tmp"
    start=$(date +%s.%N)
    if (cd "$work" && WORK="$work" TMPDIR="$work/tmp" timeout 600 bash "$t") >"$work/log" 2>&1; then
        pass=$((pass + 1)); status=ok
    else
        fail=$((fail + 1)); status=FAIL; failed+=("$name")
    fi
    printf "%-40s %s (%ss)\n" "$name" "$status" "$(awk -v a="$start" -v b="$(date +%s.%N)" "BEGIN{printf \"%.1f\", b-a}")"
    grep -E '^(pass|FAIL): ' "$work/log" | sed 's/^/    /'
    if [ $status = FAIL ]; then
        sed 's/^/    | /' "$work/log" | tail -40
        echo "    (work directory kept: $work)"
    else
        rm -rf "$work"
    fi
done
[ ${#failed[@]} -gt 0 ] && echo "failed: ${failed[*]}"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
