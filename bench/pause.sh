#!/usr/bin/env bash
# pause.sh - on one heartbeat target in one run: per `prof on`/`prof off`,
# memprof's pause of the thread it stops (its own pause figures) and the
# longest gap the never-stopped heartbeat thread sees, against
# `gdb -batch -ex 'call mallctl(...)'` (which stops every thread: the
# heartbeat gap is its pause).  Prints medians and the ratio.
set -u
: "${MEMPROF:?}" "${TARGETS:?}"
N=${N:-20}
work=$(mktemp -d /tmp/memprof-bench.XXXXXX)
MALLOC_CONF=prof:true,prof_active:false "$TARGETS/heartbeat" >"$work/hb" &
pid=$!
trap 'kill -9 $pid 2>/dev/null; rm -rf "$work"' EXIT
until grep -q ready "$work/hb"; do sleep 0.05; done

median() { sort -n | awk '{v[NR]=$1} END {if (NR==0) print "nan"; else if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }
# Longest heartbeat gap printed after line $1 of the heartbeat output.
gap_since() { tail -n +"$(( $1 + 1 ))" "$work/hb" | awk '/^gap/ {if ($2>m) m=$2} END {print m+0}'; }

# memprof: one session, a batch of toggles; its pause figure after each.
script=$work/script
: >"$script"
for i in $(seq "$N"); do printf 'prof on\ninfo\nprof off\ninfo\n' >>"$script"; done
before=$(wc -l <"$work/hb")
"$MEMPROF" -p "$pid" -x "$script" >"$work/mp.out" 2>&1 || { cat "$work/mp.out"; exit 1; }
mp_gap=$(gap_since "$before")
# skip the first stop: it warms the unwinder's caches
grep -E '^pauses' "$work/mp.out" | sed -E 's/.*last ([0-9.]+) us.*/\1/' | tail -n +2 >"$work/mp.pauses"
mp_med=$(median <"$work/mp.pauses")
mp_max=$(sort -n "$work/mp.pauses" | tail -1)

# gdb: every call stops all threads; the heartbeat gap is the pause.
: >"$work/gdb.gaps"
for i in $(seq "$N"); do
    before=$(wc -l <"$work/hb")
    v=$(( i % 2 ))
    gdb -p "$pid" -batch -ex "call (int)mallctl(\"prof.active\",0,0,&(char){$v},1)" >/dev/null 2>&1
    sleep 0.05
    gap_since "$before" >>"$work/gdb.gaps"
done
gdb_med=$(median <"$work/gdb.gaps")

printf 'memprof: stopped thread pause median %s us, max %s us (%d stops); other threads longest gap %s us\n' \
    "$mp_med" "$mp_max" "$(wc -l <"$work/mp.pauses")" "$mp_gap"
printf 'gdb:     all threads stopped, median %s us per call\n' "$gdb_med"
awk -v a="$gdb_med" -v b="$mp_med" 'BEGIN {printf "ratio:   gdb / memprof = %.0fx\n", a / b}'
