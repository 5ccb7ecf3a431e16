#!/usr/bin/env bash
# fork.sh - a session against a process that forks in a tight loop
# (tests/targets/fork_loop: its main thread forks, the child exits at once,
# a second thread churns allocations), beside the same process spinning
# instead of forking (the same load on the CPUs, no fork) and an idle one.
# For each: how many stops a session of N reads makes per second and how
# long each stop holds its thread (median, p90, max: MEMPROF_TRACE_PAUSES),
# and how many loops (forks) per second the target makes meanwhile against
# before.  Then gdb's one call (`call mallctl(...)`, every thread stopped)
# on the fork loop, with the target's forks per second while gdb is
# attached.  MIB: the heap each fork copies (default 16; 1024 makes a fork
# take tens of milliseconds).  Ratios, not limits: a busy machine moves
# every number.
set -u
: "${MEMPROF:?}" "${TARGETS:?}"
N=${N:-1000}
MIB=${MIB:-16}
work=$(mktemp -d /tmp/memprof-bench.XXXXXX)
pid=
trap '[ -n "$pid" ] && kill -9 $pid 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT

now() { date +%s.%N; }
. "$(dirname "$0")/stats.sh"
# The target's loop count now (it prints it on SIGUSR1), or "none" when
# it does not answer within 5 s (stopped, or deadlocked).
loops() {
    local before i
    before=$(grep -c '^loops' "$work/out")
    kill -USR1 "$pid"
    for i in $(seq 500); do
        if [ "$(grep -c '^loops' "$work/out")" -gt "$before" ]; then
            awk '/^loops/ {n = $2} END {print n}' "$work/out"
            return
        fi
        sleep 0.01
    done
    echo none
}
per_second() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN {printf "%.0f", (b - a) / t}'; }

start() {   # start ARGS...: fork_loop (or session_idle without args)
    : >"$work/out"
    if [ $# -gt 0 ]; then
        MALLOC_CONF=prof:true,prof_active:false "$TARGETS/fork_loop" "$@" >"$work/out" &
    else
        MALLOC_CONF=prof:true,prof_active:false "$TARGETS/session_idle" >"$work/out" &
    fi
    pid=$!
    until grep -q ready "$work/out"; do sleep 0.05; done
}
stop() { kill -9 "$pid"; wait "$pid" 2>/dev/null; pid=; }

for i in $(seq "$N"); do echo 'mallctl stats.allocated'; done >"$work/script"

# session LABEL COUNTS: one session of N reads; COUNTS: the target counts loops.
session() {
    local l0 l1 l2 t0 t1 t2
    if [ "$2" = yes ]; then l0=$(loops); t0=$(now); sleep 1; l1=$(loops); t1=$(now); fi
    local s e
    s=$(now)
    MEMPROF_TRACE_PAUSES=1 "$MEMPROF" -p "$pid" -x "$work/script" >/dev/null 2>"$work/err" ||
        { echo "memprof failed:"; tail -3 "$work/err"; exit 1; }
    e=$(now)
    [ "$2" = yes ] && { l2=$(loops); t2=$(now); }
    local n secs
    n=$(grep -c '^pause .* calls=[1-9]' "$work/err")
    secs=$(awk -v a="$s" -v b="$e" 'BEGIN {print b - a}')
    read -r med p90 max cnt < <(grep '^pause' "$work/err" | sed -E 's/.* us=([0-9.]+) .*/\1/' | stats)
    local rate
    rate=$(awk -v n="$n" -v t="$secs" 'BEGIN {printf "%.0f", n / t}')
    printf '%-34s %6s stops/s; stop median %5s us, p90 %6s us, max %6s us (%d stops, %d refused)' \
        "$1" "$rate" "$med" "$p90" "$max" "$cnt" "$(grep -c 'refused' "$work/err")"
    if [ "$2" = yes ]; then
        printf '; target loops/s %s before, %s during' "$(per_second "$l0" "$l1" "$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')")" \
            "$(per_second "$l1" "$l2" "$(awk -v a="$t1" -v b="$t2" 'BEGIN {print b - a}')")"
    fi
    echo
    eval "rate_$3=$rate"
}

echo "== $N reads of stats.allocated per session; fork_loop heap $MIB MiB; $(nproc) CPUs"
start;                      session "idle target" no idle; stop
start spin "$MIB";          session "spinning (no fork, same load)" yes spin; stop
start fork "$MIB";          session "forking in a loop" yes fork
awk -v f="$rate_fork" -v s="$rate_spin" -v i="$rate_idle" 'BEGIN {
    printf "ratio:   stops/s forking / spinning = %.2f, forking / idle = %.2f\n", f / s, f / i }'

# gdb: one call with every thread stopped, on the same fork loop (bounded:
# gdb can hang there, and its call can run inside the fork's atfork
# handlers, which hold jemalloc's locks).
if command -v gdb >/dev/null; then
    l0=$(loops); t0=$(now)
    timeout -s KILL 60 gdb -p "$pid" -batch -ex 'call (long)mallctl("epoch",0,0,0,0)' \
        >"$work/gdb.out" 2>&1
    rc=$?
    t1=$(now)
    secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')
    l1=$(loops)
    if [ "$rc" = 137 ]; then
        printf 'gdb:     one mallctl call had no answer after %.0f s (killed)' "$secs"
    elif grep -q '^\$1 = 0$' "$work/gdb.out"; then
        printf 'gdb:     one mallctl call took %.0f ms' "$(awk -v s="$secs" 'BEGIN {print s * 1000}')"
    else
        printf 'gdb:     the call failed (%s)' "$(grep -v '^\[' "$work/gdb.out" | tail -1)"
    fi
    if [ "$l1" = none ]; then
        printf '; the target answers no more: '
        for t in /proc/"$pid"/task/*; do printf '%s %s ' "${t##*/}" "$(cat "$t/wchan" 2>/dev/null)"; done
        echo "(wchan)"
    else
        printf '; the target made %s loops/s meanwhile\n' "$(per_second "$l0" "$l1" "$secs")"
    fi
fi
stop
