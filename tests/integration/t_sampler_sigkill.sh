# SIGKILL to memprof while its heap sampler goes into a process that
# allocates without pause (glibc_churn, two workers), while it is in, and
# while it comes out, at random points.  After each kill the process runs
# on correctly (counters advance, a round's blocks check out), and the next
# 'memprof -p PID -e info' finds what was left: it names the sampler a gone
# memprof left and puts back exactly the slots still pointing into it
# (none point there afterwards).  A sampler orphaned while on stops
# sampling by itself: its ctl.state becomes ORPHAN (2) as soon as the
# process allocates.
. "$SRCDIR/tests/integration/lib.sh"

IN_KILLS=${IN_KILLS:-12}
ON_KILLS=${ON_KILLS:-4}
OUT_KILLS=${OUT_KILLS:-4}
CONF= start_target glibc_churn 2
base_fds=$(find "/proc/$PID/fd" -mindepth 1 -maxdepth 1 | wc -l)
counts() { words_at "$PID" counts 2; }
advancing() { local a; a=$(counts); within 5 holds all_grew_now "$a"; }
all_grew_now() { all_grew "$1" "$(counts)" 2>/dev/null || die "counters stuck at $1"; }
rounds() { grep -c '^round [0-9]* ok' "$TARGET_OUT"; }
# round_ok: a round in the main thread completes and its blocks check out.
round_ok() {
    local n=$(($(rounds) + 1))
    kill -USR1 "$PID"
    within 10 grep -q "^round $n ok" "$TARGET_OUT" &&
        [ "$(tail -2 "$TARGET_OUT" | head -1)" = "live round_keep 2000000 1000" ]
}
ms() {      # a random delay under $1 ms: where the kill lands
    local r=$(( (RANDOM * 32768 + RANDOM) % $1 ))
    printf '%d.%03d' $((r / 1000)) $((r % 1000))
}

# sweep_after LABEL: the next session puts back what is left; bad counts
# mismatches in $bad, sessions that found a leftover in $found.
bad=0 found=0 sick=0
sweep_after() {
    local left note n
    left=$(got_into_sampler "$PID" 2>/dev/null)
    mp -p "$PID" -e info
    note=$(grep -o "memprof's sampler was left on in process $PID by a memprof that is gone (pid [0-9]*): [0-9]* call-table slot" <<<"$ERR")
    n=$(grep -o ': [0-9]* call-table' <<<"$note" | tr -dc 0-9)
    # the body goes once no thread is in it: the next session unmaps it
    if [ "$(sampler_bodies "$PID")" != 0 ]; then
        echo "$1: a sampler body is still mapped after the next session"
        bad=$((bad + 1))
    fi
    if [ "$RC" != 0 ] || [ "$(got_into_sampler "$PID" 2>/dev/null)" != 0 ] ||
       { [ "${left:-0}" -gt 0 ] && [ "${n:-x}" != "$left" ]; }; then
        echo "$1: $left slots were left, the next session said: ${note:-nothing} (exit $RC); $(got_into_sampler "$PID" 2>/dev/null) left after"
        bad=$((bad + 1))
    fi
    [ "${left:-0}" -gt 0 ] && found=$((found + 1))
    grep -q CORRUPT "$TARGET_OUT" && sick=$((sick + 1))
    return 0
}

# 1. while going in: a batch 'prof on' killed at a random point of the time
# it takes to go in (it attaches, builds its unwind rows, maps the region in
# one stop and patches the slots: about 100 ms here, several times that
# under the sanitizers or a loaded machine), measured first, so that the
# kills span it whatever the build and the load.
t0=${EPOCHREALTIME/[.,]/}
"$MEMPROF" -p "$PID" -e 'prof sample 12' -e 'prof on' -e 'sleep 5' >/dev/null 2>&1 &
m=$!
holds wait_until 20 "the sampler to be on" sampler_state_is "$PID" 1 || { kill -9 "$m"; die "the sampler never came on"; }
IN_MS=$(( (${EPOCHREALTIME/[.,]/} - t0) / 1000 + 20 ))
kill -TERM "$m"; wait "$m" 2>/dev/null
echo "[$SECONDS s] going in takes about $IN_MS ms here"
for i in $(seq "$IN_KILLS"); do
    "$MEMPROF" -p "$PID" -e 'prof sample 12' -e 'prof on' -e 'sleep 5' >/dev/null 2>&1 &
    m=$!
    sleep "$(ms "$IN_MS")"
    kill -9 "$m"; wait "$m" 2>/dev/null
    sweep_after "going in #$i"
done
echo "[$SECONDS s] going in: $found of $IN_KILLS kills left slots pointing at the sampler"
check "going in: some kills left slots behind (the test reached the sampler)" [ "$found" -gt 0 ]
check "going in: each next session put back exactly the slots left, none remain" [ "$bad" = 0 ]
check "going in: the process is sound (no block corrupted)" [ "$sick" = 0 ]
check "going in: its counters advance" advancing
check "going in: a round completes, its blocks intact" round_ok
check "going in: the process is untraced, not stopped" untouched "$PID"

# 2. while in, under load: the orphan stops sampling by itself
bad=0 found=0
orphaned=0
for i in $(seq "$ON_KILLS"); do
    "$MEMPROF" -p "$PID" -e 'prof sample 12' -e 'prof on' -e 'sleep 30' >"$WORK/on.out" 2>&1 &
    m=$!
    holds wait_until 20 "the sampler to be on" sampler_state_is "$PID" 1 || { kill -9 "$m"; die "the sampler never came on"; }
    sleep "$(ms 300)"
    kill -9 "$m"; wait "$m" 2>/dev/null
    if holds wait_until 10 "the orphaned sampler to notice" sampler_state_is "$PID" 2; then
        orphaned=$((orphaned + 1))
        s1=$(sampler_ctl "$PID" samples)
        round_ok || echo "round failed with an orphaned sampler in"
        [ "$(sampler_ctl "$PID" samples)" = "$s1" ] || echo "the orphan took samples: $s1 -> $(sampler_ctl "$PID" samples)"
        [ "$(sampler_ctl "$PID" samples)" = "$s1" ] || orphaned=$((orphaned - 1))
    fi
    sweep_after "while in #$i"
done
echo "[$SECONDS s] while in done"
check "while in: every kill left the sampler's slots" [ "$found" = "$ON_KILLS" ]
check "while in: each orphan became ORPHAN by itself and took no more samples" [ "$orphaned" = "$ON_KILLS" ]
check "while in: each next session put back exactly the slots left" [ "$bad" = 0 ]
check "while in: the process is sound" [ "$sick" = 0 ]
check "while in: its counters advance" advancing
check "while in: a round completes, its blocks intact" round_ok

# 3. while coming out: 20 on/off pairs killed at a random point
: >"$WORK/cycles"
for i in $(seq 20); do printf 'prof on\nprof off\n' >>"$WORK/cycles"; done
bad=0 found=0
for i in $(seq "$OUT_KILLS"); do
    "$MEMPROF" -p "$PID" -x "$WORK/cycles" >"$WORK/out.out" 2>&1 &
    m=$!
    holds wait_until 20 "a first prof off" file_has "$WORK/out.out" 'profiling is now off'
    sleep "$(ms 200)"
    kill -9 "$m"; wait "$m" 2>/dev/null
    sweep_after "coming out #$i"
done
echo "[$SECONDS s] coming out: $found of $OUT_KILLS kills left slots pointing at the sampler"
check "coming out: each next session put back exactly the slots left, none remain" [ "$bad" = 0 ]
check "coming out: the process is sound" [ "$sick" = 0 ]
check "coming out: its counters advance" advancing
check "coming out: a round completes, its blocks intact" round_ok

# after all that: one region, reused; a clean session leaves the process
# as it found it
mp -p "$PID" -e 'prof sample 0' -e 'prof on' -e 'prof off'
check "a clean session afterwards works" mp_ok
grep memprof-sampler "/proc/$PID/maps" >&2
check "only one gate (stand-ins' page) was ever mapped ($(sampler_regions "$PID") are)" [ "$(sampler_regions "$PID")" = 1 ]
check "no sampler body is left mapped" [ "$(sampler_bodies "$PID")" = 0 ]
sr=$(sampler_smaps "$PID")
echo "after every kill: memprof's mappings in process $PID: Size and Rss (KiB) $sr"
check "memprof's mappings are the gate's 8 KiB, at most 8 KiB resident (smaps: $sr)" \
    sampler_gate_only "$sr"
check "no GOT slot points into the sampler" [ "$(got_into_sampler "$PID")" = 0 ]
now_fds=$(find "/proc/$PID/fd" -mindepth 1 -maxdepth 1 | wc -l)
ls -l "/proc/$PID/fd" >&2
check "no descriptor left behind by the killed sessions ($base_fds before, $now_fds now)" [ "$now_fds" = "$base_fds" ]
check "the process is left running, untraced" untouched "$PID"
