#!/usr/bin/env bash
# sampler_stop.sh - the stop that puts memprof's heap sampler into a
# process ('prof on'), over N sessions (default 40) on glibc_live, idle
# and with every CPU busy (load_start: one spinner per CPU at normal
# priority), interleaved: median, p90 and max of the whole stop, and the
# median of its phases as attach/ measures them (MEMPROF_TRACE_PAUSES=1:
# stop = until the thread is stopped, check, body = the calls it runs,
# release), for the first 'prof on' (the gate and the body mapped: two
# memfds, each mapped, its data mapped and advised, closed; the sampler's
# make_watch) and for the later ones (the gate kept: the body alone).  The machine may
# be shared: what runs beside this benchmark adds to both.  Figures, not
# limits.
set -u
: "${MEMPROF:?}" "${TARGETS:?}"
N=${N:-40}
. "$(dirname "$0")/stats.sh"
bench_scratch memprof-bench

# fresh: glibc_live started (again), once it says ready.
fresh() {
    [ -n "$pid" ] && { kill -9 "$pid"; wait "$pid"; } 2>/dev/null
    "$TARGETS/glibc_live" >"$work/out" 2>&1 &
    pid=$!
    for _ in $(seq 200); do grep -q '^ready' "$work/out" && break; sleep 0.05; done
}
fresh

# one_on LABEL: one session's prof on/off; its going-in stop's pause line
# (the first stop whose body ran more than one call) kept under LABEL.
one_on() {
    MEMPROF_TRACE_PAUSES=1 "$MEMPROF" -p "$pid" -e 'prof on' -e 'prof off' 2>&1 |
        awk '/^pause / && $4 != "calls=1" { print; exit }' >>"$work/$1"
}
one_on first.idle          # the first: a new region
for i in $(seq "$N"); do
    one_on reuse.idle
    load_start
    one_on reuse.busy
    load_stop
done
# A new region under load: a fresh process each time.
for i in $(seq $(( N / 4 > 0 ? N / 4 : 1 ))); do
    fresh
    one_on first.idle
    fresh
    load_start
    one_on first.busy
    load_stop
done

field() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p" "$work/$2"; }
printf '%-28s %8s %8s %8s %5s   %s\n' "going-in stop (us)" median p90 max n \
    "phase medians: stop check body release"
for f in first.idle first.busy reuse.idle reuse.busy; do
    [ -s "$work/$f" ] || continue
    read -r med p90 max n < <(field us "$f" | stats)
    phases=""
    for ph in stop check body release; do
        phases+=" $(field "$ph" "$f" | stats | cut -d' ' -f1)"
    done
    calls=$(sed -n 's/.* calls=\([0-9]*\).*/\1/p' "$work/$f" | sort | uniq -c | sort -rn | awk 'NR==1 {print $2}')
    printf '%-28s %8s %8s %8s %5s  %s (%s calls)\n' "$f" "$med" "$p90" "$max" "$n" "$phases" "$calls"
done
echo "load: $(nproc) CPUs; load average now $(cut -d' ' -f1-3 /proc/loadavg)"
