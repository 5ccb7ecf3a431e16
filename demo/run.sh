#!/usr/bin/env bash
# demo/run.sh - the built-in demo (run through `make demo`, or tools/demo.sh).
# Starts the sample service with profiling compiled in but inactive, attaches
# memprof to it, runs a 10-second profiling run (a dump every 2 s, sampling
# put back afterwards), and shows where the memory is, what grew steadily
# (the leak) and an HTML report.
set -eu
: "${MEMPROF:?}" "${SERVICE:?}"
# The dumps and pictures stay in $out for a look afterwards.
out=${DEMO_OUT:-/tmp/memprof-demo}
mkdir -p "$out"
work=$(mktemp -d /tmp/memprof-demo-run.XXXXXX)
pid=
finish() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap finish EXIT

echo "== starting the sample service: MALLOC_CONF=prof:true,prof_active:false (no cost until activated)"
MALLOC_CONF=prof:true,prof_active:false "$SERVICE" >"$work/service.out" 2>&1 &
pid=$!
for _ in $(seq 100); do grep -q ready "$work/service.out" && break; sleep 0.1; done
grep -q ready "$work/service.out" || { echo "the sample service did not start"; exit 1; }
echo "   pid $pid"
echo
echo "== memprof -p $pid: attach, a 10 s profiling run (a dump every 2 s), analyse"
rm -rf "$out/run"
"$MEMPROF" -p "$pid" \
    -e info \
    -e "profile start --duration 10s --every 2s --sample 17 --save $out/run" \
    -e 'profile wait' \
    -e 'profile' \
    -e 'top 8 run1' \
    -e 'trend run1 5' \
    -e 'diff run1.1 run1' \
    -e "flame $out/growth.svg --base run1.1 run1" \
    -e "graph $out/latest.svg run1" \
    -e "pprof $out/latest.pb.gz run1" \
    -e "report $out/report.html run1" \
    -e 'info'
echo
state=$(awk '/^State:/ {print $2, $3}' /proc/$pid/status)
tracer=$(awk '/^TracerPid:/ {print $2}' /proc/$pid/status)
echo "== the service is still running: state $state, TracerPid $tracer"
left=$(ls -d /tmp/memprof.* /tmp/memprof-[0-9]*-* 2>/dev/null | wc -l)
echo "== memprof directories left in /tmp: $left"
kill "$pid"
wait "$pid" 2>/dev/null || true
pid=
echo "== demo finished; pictures and the report in $out, the run's dumps in $out/run"
echo "   (offline again: $MEMPROF $out/run -e trend):"
ls -l "$out" "$out/run"
