#!/usr/bin/env bash
# tools/demo.sh - one command from a fresh clone to the demo: installs what
# is missing, builds memprof and the sample service, runs demo/run.sh.
set -eu
cd "$(dirname "$0")/.."
bash tools/deps.sh
[ -f Makefile ] || ./configure >/dev/null
make -s -j2 memprof build/demo/sample_service
make -s demo
