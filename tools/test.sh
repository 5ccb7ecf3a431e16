#!/usr/bin/env bash
# tools/test.sh - one command from a fresh clone to the whole test suite:
# installs what is missing, builds, makes the container tests' images,
# runs the unit and integration tests,
# all of them again with memprof built under ASan+UBSan, a short fuzzing
# pass over every parser, and the arm64 lane (tools/arm64/lane.sh; skipped
# with MEMPROF_ARM64=0).  Ends with one line counting every unit check and
# integration test of all runs, "total: N passed, N failed",
# and "result: all passed" or "result: FAILED" (exit status 0 or 1).
set -u
cd "$(dirname "$0")/.."
bash tools/deps.sh || exit 1
# (re)configure when there is no Makefile or it is older than its sources
{ [ Makefile -nt Makefile.in ] && [ Makefile -nt configure ]; } || ./configure >/dev/null || exit 1
make -s -j2 || exit 1
log=$(mktemp /tmp/memprof-test.XXXXXX)
trap 'rm -f "$log"' EXIT
status=0
# The real-container tests' podman images (tools/containers/rootfs.sh):
# made here, before the tests, when missing or their package lists
# changed; a failure shows in those tests, each of which says why.
bash tools/containers/rootfs.sh 2>&1 | tail -3
make -s -k check 2>&1 | tee -a "$log"; [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
make -s -k check SANITIZE=1 2>&1 | tee -a "$log"; [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
make -s fuzz FUZZ_SECONDS="${FUZZ_SECONDS:-20}" >"$log.fuzz" 2>&1 || { status=1; tail -40 "$log.fuzz"; }
grep -E '^(fuzzing|Done [0-9]+ runs)' "$log.fuzz"
rm -f "$log.fuzz"
# The arm64 lane (docs/testing.md): memprof cross-built for arm64 and a
# subset of the integration tests in an emulated arm64 machine; its
# "N passed, M failed" line is counted below.
if [ "${MEMPROF_ARM64:-1}" = 0 ]; then
    echo "arm64 lane: skipped (MEMPROF_ARM64=0)"
else
    bash tools/arm64/lane.sh 2>&1 | tee -a "$log"; [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi
# Unit: "100%: Checks: N, Failures: F, Errors: E"; integration: "N passed, M failed".
awk '
    /Checks: [0-9]+, Failures: [0-9]+, Errors: [0-9]+/ {
        gsub(/,/, ""); for (i = 1; i <= NF; i++) {
            if ($i == "Checks:") c = $(i + 1); if ($i == "Failures:") f = $(i + 1); if ($i == "Errors:") e = $(i + 1)
        }
        pass += c - f - e; fail += f + e
    }
    /^[0-9]+ passed, [0-9]+ failed$/ { pass += $1; fail += $3 }
    END { printf "total: %d passed, %d failed\n", pass, fail; exit fail > 0 }
' "$log" || status=1
# A build or fuzzing failure counts no test: say so rather than let the
# total above read as a pass.
[ $status -eq 0 ] && echo "result: all passed" || echo "result: FAILED (see above)"
exit $status
