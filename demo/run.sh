#!/usr/bin/env bash
# demo/run.sh - the built-in demo (run through `make demo`, or tools/demo.sh).
# Starts the sample service with profiling compiled in but inactive, attaches
# memprof to it, turns sampling on, takes two dumps a few seconds apart,
# turns sampling off, and shows where the memory is and what grew.
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
echo "== memprof -p $pid: attach, profile for a few seconds, dump twice, analyse"
"$MEMPROF" -p "$pid" \
    -e info \
    -e 'prof sample 17' \
    -e 'prof on' \
    -e 'sleep 2' \
    -e "dump $out/before.heap --name before" \
    -e 'sleep 3' \
    -e "dump $out/after.heap --name after" \
    -e 'prof off' \
    -e 'prof sample 19' \
    -e 'top 8 after' \
    -e 'diff before after' \
    -e "flame $out/growth.svg --base before after" \
    -e "graph $out/after.svg after" \
    -e "pprof $out/after.pb.gz after" \
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
echo "== demo finished; dumps and pictures in $out:"
ls -l "$out"
