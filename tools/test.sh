#!/usr/bin/env bash
# tools/test.sh - one command from a fresh clone to the whole test suite:
# installs what is missing, builds, runs the unit and integration tests,
# all of them again with memprof built under ASan+UBSan, and a short
# fuzzing pass over every parser.
set -eu
cd "$(dirname "$0")/.."
bash tools/deps.sh
[ -f Makefile ] || ./configure >/dev/null
make -s -j2
status=0
make -s check || status=1
make -s check SANITIZE=1 || status=1
make -s fuzz FUZZ_SECONDS="${FUZZ_SECONDS:-20}" || status=1
exit $status
