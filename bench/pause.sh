#!/usr/bin/env bash
# pause.sh [TARGET...] - on heartbeat targets: how long memprof stops the
# one thread it hijacks for each `prof on`/`prof off` (every stop measured
# by attach/ itself, MEMPROF_TRACE_PAUSES=1: from PTRACE_INTERRUPT to the
# return of PTRACE_DETACH), and the longest gap the never-stopped heartbeat
# thread sees meanwhile; against `gdb -batch -ex 'call mallctl(...)'`,
# which stops every thread (the heartbeat gap is its pause).  Prints
# median/p90/max and the ratio of medians per target, then the medians side
# by side.  TARGET: c (tests/targets/heartbeat.c, shared libjemalloc) and
# rust (rustprof --heartbeat: jemalloc-sys's static _rjem_ copy); both by
# default.  The heartbeat also reports plain descheduling (> 50 us) on a
# busy machine: its gaps are an upper bound.  A gdb call that fails, hangs
# (60 s) or leaves the target dead is reported as gdb's result, and the
# comparison goes on with the calls that worked.  Then the thread held per
# `stats` summary, through memprof's call runner and one call at a time
# (stats_held below).  Last, the tail of the stop (stop_tail below): p50,
# p99 and max of memprof's stop idle and with every CPU busy (nproc
# spinning processes at normal priority, started and stopped here), with
# memprof's priority raised for each stop (its default as root) and not
# (MEMPROF_STOP_PRIORITY=0).  The machine may be shared: "idle" is only
# this benchmark's load, so each figure is measured REPS times, interleaved.
set -u
: "${MEMPROF:?}" "${TARGETS:?}"
N=${N:-200}         # memprof toggles (prof on + prof off = 2 stops each)
NGDB=${NGDB:-20}    # gdb calls (each takes about a second)
NT=${NT:-300}       # toggles per stop_tail measurement
REPS=${REPS:-3}     # stop_tail measurements per configuration
. "$(dirname "$0")/stats.sh"
bench_scratch memprof-bench
# Heartbeat gaps printed after line $1 of its output.
gaps_since() { tail -n +"$(( $1 + 1 ))" "$work/hb" | awk '/^gap/ {print $2}'; }

# measure NAME: the target $pid (its mallctl function: $mallctl).
measure() {
    echo "== $1 target"
    # memprof: one session of toggles, nothing else, so every stop is a toggle.
    : >"$work/script"
    for i in $(seq "$N"); do printf 'prof on\nprof off\n' >>"$work/script"; done
    before=$(wc -l <"$work/hb")
    MEMPROF_TRACE_PAUSES=1 "$MEMPROF" -p "$pid" -x "$work/script" >"$work/mp.out" 2>"$work/mp.err" ||
        { cat "$work/mp.out" "$work/mp.err"; exit 1; }
    sleep 0.05
    gaps_since "$before" >"$work/mp.gaps"
    grep -E '^pause .* calls=1 ' "$work/mp.err" | grep -v refused |
        sed -E 's/.* us=([0-9.]+) .*/\1/' >"$work/mp.pauses"
    [ "$(wc -l <"$work/mp.pauses")" -eq $((2 * N)) ] ||
        { echo "expected $((2 * N)) traced toggles, got $(wc -l <"$work/mp.pauses")"; exit 1; }
    first=$(head -1 "$work/mp.pauses")
    read -r mp_med mp_p90 mp_max mp_n < <(stats <"$work/mp.pauses")
    read -r mg_med mg_p90 mg_max mg_n < <(stats <"$work/mp.gaps")

    # gdb: every call stops all threads; the heartbeat gap is the pause.
    # The new value is a string literal, which gdb copies into the process
    # (by calling its malloc): "\001" is true, "" (just its NUL) false.
    # A call that fails, or a target gdb leaves dead or not answering, is
    # gdb's result (the anchor harmed the process): said, and the
    # comparison goes on with the calls that worked.
    : >"$work/gdb.gaps"
    gdb_harm=
    for i in $(seq "$NGDB"); do
        before=$(wc -l <"$work/hb")
        if [ $(( i % 2 )) = 1 ]; then value='"\001"'; else value='""'; fi
        timeout -s KILL 60 gdb -p "$pid" -batch \
            -ex "call (int)$mallctl(\"prof.active\",0,0,$value,1)" >"$work/gdb.out" 2>&1
        rc=$?
        sleep 0.05
        if ! kill -0 "$pid" 2>/dev/null || grep -q '^State:.*Z' "/proc/$pid/status" 2>/dev/null; then
            wait "$pid" 2>/dev/null
            gdb_harm="the target died after gdb's call $i (status $?$(tail -1 "$work/hb.err" 2>/dev/null | sed 's/^/: /'))"
        elif [ "$rc" = 137 ]; then
            gdb_harm="gdb's call $i had no answer within 60 s"
        elif ! grep -q '^\$1 = 0$' "$work/gdb.out"; then
            gdb_harm="gdb's call $i failed: $(grep -v '^\[' "$work/gdb.out" | grep -v '^$' | head -2 | tr '\n' ' ')"
        else
            gaps_since "$before" | sort -n | tail -1 >>"$work/gdb.gaps"
            continue
        fi
        break
    done
    read -r gdb_med gdb_p90 gdb_max gdb_n < <(stats <"$work/gdb.gaps")

    printf 'memprof: stopped thread, per toggle: median %s us, p90 %s us, max %s us (%d stops; first %.0f us)\n' \
        "$mp_med" "$mp_p90" "$mp_max" "$mp_n" "$first"
    printf 'memprof: heartbeat thread (never stopped): longest gap %s us over the session (%d gaps > 50 us, median %s us)\n' \
        "$mg_max" "$mg_n" "$mg_med"
    [ -z "$gdb_harm" ] || echo "gdb:     harmed the process: $gdb_harm"
    if [ "$gdb_n" -gt 0 ]; then
        printf 'gdb:     all threads stopped, heartbeat gap per mallctl call: median %s us, p90 %s us, max %s us (%d calls)\n' \
            "$gdb_med" "$gdb_p90" "$gdb_max" "$gdb_n"
        awk -v a="$gdb_med" -v b="$mp_med" 'BEGIN {printf "ratio:   gdb pause (heartbeat gap) / memprof stop (timed by memprof), medians = %.0fx\n", a / b}'
    else
        echo "gdb:     no call of gdb's completed: no ratio"
    fi
    stats_held "$1"
    stop_tail "$1"
    summary+=("$(printf '%-5s memprof stop median %6s us   gdb pause median %8s us%s' "$1" "$mp_med" \
        "$gdb_med" "${gdb_harm:+ (gdb harmed the process)}")   $stats_summary   loaded p99 raised $tail_raised us, plain $tail_plain us")
}

# stats_held NAME: the thread held per `stats` summary (its hundreds of
# mallctl reads): NS summaries in one session, the last NS stops traced
# (the first summary of a session also reads the size classes), through
# memprof's call runner and one remote call at a time
# (MEMPROF_TEST_NO_RUNNER=1, as before the runner); and the pre-call check
# of each stop (check= in the trace: the borrowed thread's stack walked).
stats_held() {
    local ns=${NS:-40} mode env
    : >"$work/script.stats"
    for i in $(seq "$ns"); do echo stats >>"$work/script.stats"; done
    for mode in runner one-by-one; do
        env=; [ "$mode" = one-by-one ] && env=MEMPROF_TEST_NO_RUNNER=1
        env $env MEMPROF_TRACE_PAUSES=1 "$MEMPROF" -p "$pid" -x "$work/script.stats" \
            >/dev/null 2>"$work/stats.err" || { cat "$work/stats.err"; exit 1; }
        grep -E '^pause ' "$work/stats.err" | grep -v refused | tail -n "$ns" >"$work/stats.stops"
        sed -E 's/.* us=([0-9.]+) .*/\1/' "$work/stats.stops" >"$work/stats.us"
        sed -E 's/.* check=([0-9.]+) .*/\1/' "$work/stats.stops" >"$work/stats.check"
        read -r st_med st_p90 st_max st_n < <(stats <"$work/stats.us")
        read -r ck_med ck_p90 ck_max ck_n < <(stats <"$work/stats.check")
        printf 'stats:   held per summary (%s): median %s us, p90 %s us, max %s us (%d summaries); pre-call check median %s us, max %s us\n' \
            "$mode" "$st_med" "$st_p90" "$st_max" "$st_n" "$ck_med" "$ck_max"
        [ "$mode" = runner ] && runner_med=$st_med
    done
    awk -v a="$st_med" -v b="$runner_med" 'BEGIN {printf "ratio:   stats held one call at a time / through the runner, medians = %.0fx\n", a / b}'
    awk -v a="${gdb_med:-nan}" -v b="$runner_med" 'BEGIN {if (a != "nan") printf "ratio:   gdb pause for ONE mallctl call / memprof stats summary (hundreds of calls), medians = %.1fx\n", a / b}'
    stats_summary="stats held median $runner_med us (one by one: $st_med us)"
}

# stop_tail NAME: NT toggles (2 * NT stops) per measurement, REPS times
# per configuration, the configurations interleaved so that the machine's
# other load falls on all of them alike: idle and loaded, memprof's
# priority raised for each stop (raised) and not (plain).  p50/p99/max per
# configuration over all its stops, and the worst p99 of one measurement.
stop_tail() {
    local load prio rep env
    : >"$work/script.tail"
    for i in $(seq "$NT"); do printf 'prof on\nprof off\n' >>"$work/script.tail"; done
    for load in idle loaded; do
        for prio in raised plain; do : >"$work/tail.$load.$prio"; : >"$work/tailp99.$load.$prio"; done
    done
    for rep in $(seq "$REPS"); do
        for load in idle loaded; do
            [ "$load" = loaded ] && load_start
            for prio in raised plain; do
                env=MEMPROF_STOP_PRIORITY=1; [ "$prio" = plain ] && env=MEMPROF_STOP_PRIORITY=0
                env $env MEMPROF_TRACE_PAUSES=1 "$MEMPROF" -p "$pid" -x "$work/script.tail" \
                    >/dev/null 2>"$work/tail.err" || { load_stop; cat "$work/tail.err"; exit 1; }
                grep -E '^pause .* calls=1 ' "$work/tail.err" | grep -v refused |
                    sed -E 's/.* us=([0-9.]+) .*/\1/' >"$work/tail.one"
                cat "$work/tail.one" >>"$work/tail.$load.$prio"
                stats_tail <"$work/tail.one" | awk '{print $2}' >>"$work/tailp99.$load.$prio"
            done
            [ "$load" = loaded ] && load_stop
        done
    done
    local note
    note=$(MEMPROF_TRACE_PAUSES=1 "$MEMPROF" -p "$pid" -e 'prof on' -e 'prof off' 2>&1 >/dev/null |
           grep -m1 'note: memprof does not raise')
    [ -z "$note" ] || echo "tail:    $note"
    for load in idle loaded; do
        for prio in raised plain; do
            read -r t50 t99 tmax tn < <(stats_tail <"$work/tail.$load.$prio")
            w99=$(sort -n "$work/tailp99.$load.$prio" | tail -1)
            printf 'tail:    %-6s priority %-6s: p50 %5s us, p99 %6s us, max %6s us (%d stops in %d runs; worst run p99 %s us)\n' \
                "$load" "$prio" "$t50" "$t99" "$tmax" "$tn" "$REPS" "$w99"
            [ "$load/$prio" = loaded/raised ] && tail_raised=$t99
            [ "$load/$prio" = loaded/plain ] && tail_plain=$t99
        done
    done
    awk -v a="$tail_plain" -v b="$tail_raised" 'BEGIN {printf "ratio:   loaded p99, priority plain / raised = %.1fx\n", a / b}'
}

# start NAME: the heartbeat target of that name, profiling ready but off.
start() {
    case $1 in
    c)    MALLOC_CONF=prof:true,prof_active:false "$TARGETS/heartbeat" >"$work/hb" 2>"$work/hb.err" &
          mallctl=mallctl ;;
    rust) _RJEM_MALLOC_CONF=prof:true,prof_active:false "$TARGETS/rustprof" --heartbeat \
              >"$work/hb" 2>"$work/hb.err" &
          mallctl=_rjem_mallctl ;;
    *)    echo "unknown target $1 (c or rust)" >&2; exit 2 ;;
    esac
    pid=$!
    until grep -q ready "$work/hb"; do sleep 0.05; done
}

targets=("$@")
[ $# -gt 0 ] || targets=(c rust)
summary=()
for t in "${targets[@]}"; do
    start "$t"
    measure "$t" || exit 1
    kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; pid=
done
echo "== side by side"
printf '%s\n' "${summary[@]}"
