# Two memprof sessions on one process exclude each other (issue 6.1): while
# session A dumps repeatedly, every session B that reads stats.allocated
# either runs after A or is refused with a message naming A's pid -- never
# a crash of the target, never a fault in a call, never "another
# debugger".  A holder killed by SIGKILL frees the lock at once.
# Whether a B meets A depends on how long A's dumps take beside a B's
# start (A's 20 dumps took 0.3 s here): after ROUNDS rounds, rounds go on
# until some B was refused, and while none has been, each round doubles
# A's dumps; within a deadline that stretches with $SLOW.
. "$SRCDIR/tests/integration/lib.sh"

ROUNDS=${ROUNDS:-12}
DUMPS=20

start_target stress8
dumps=()
set_dumps() { dumps=(); for _ in $(seq "$DUMPS"); do dumps+=(-e dump); done; }
set_dumps

refused=0 ran=0 wrong=0 a_failed=0
deadline=$(( ${EPOCHREALTIME/[.,]/} + $(awk -v k="$SLOW" 'BEGIN { printf "%d", 120 * k * 1000000 }') ))
round=0
while [ "$round" -lt "$ROUNDS" ] ||
      { [ "$refused" = 0 ] && [ "${EPOCHREALTIME/[.,]/}" -lt "$deadline" ]; }; do
    round=$((round + 1))
    "$MEMPROF" -p "$PID" -e 'prof on' "${dumps[@]}" -e 'prof off' \
        >"$WORK/a.$round.out" 2>"$WORK/a.$round.err" &
    apid=$!
    wait_until 30 "session A of round $round to attach" \
        grep -q '^attached to process' "$WORK/a.$round.err"   # a status line: on stderr
    b=0
    while kill -0 "$apid" 2>/dev/null; do
        b=$((b + 1))
        if "$MEMPROF" -p "$PID" -e 'mallctl stats.allocated' \
            >"$WORK/b.$round.$b.out" 2>"$WORK/b.$round.$b.err"; then
            ran=$((ran + 1))
        elif grep -q "is already being inspected by memprof (pid $apid, user root)" \
            "$WORK/b.$round.$b.err"; then
            refused=$((refused + 1))
        else
            wrong=$((wrong + 1))
            echo "round $round, B $b failed otherwise: $(cat "$WORK/b.$round.$b.err")" >&2
        fi
    done
    wait "$apid" || { a_failed=$((a_failed + 1)); echo "A of round $round: $(cat "$WORK/a.$round.err")" >&2; }
    alive "$PID" || break
    if [ "$refused" = 0 ] && [ "$DUMPS" -lt 20000 ]; then
        DUMPS=$((DUMPS * 2)); set_dumps
    fi
done
echo "B sessions: $refused refused naming A, $ran ran after A, $wrong failed otherwise;" \
     "A failed $a_failed times; $round rounds, the last A $DUMPS dumps" >&2

check "the target survived $round rounds" alive "$PID"
check "the target saw no corruption" bash -c "! grep -q CORRUPT '$TARGET_OUT'"
check "every session A ran to its end" test "$a_failed" = 0
check "B was refused while A held the process" test "$refused" -gt 0
check "every refusal of B named A's pid" test "$wrong" = 0
check "no message blamed another debugger" \
    bash -c "! grep -l 'another debugger' '$WORK'/a.*.err '$WORK'/b.*.err"
check "no call faulted" bash -c "! grep -l 'faulted' '$WORK'/a.*.err '$WORK'/b.*.err"

# A holder killed by SIGKILL: its lock goes with it, the next session works
# at once (no wait, no stale lock).
"$MEMPROF" -p "$PID" -e 'mallctl stats.allocated' -e 'sleep 60' >"$WORK/k.out" 2>"$WORK/k.err" &
kpid=$!
wait_until 30 "the session to be killed to attach" grep -q '^stats.allocated' "$WORK/k.out"
mp -p "$PID" -e 'mallctl stats.allocated'
check "a second session is refused while the holder lives" \
    grep -q "already being inspected by memprof (pid $kpid" <<<"$ERR"
kill -9 "$kpid"
wait "$kpid" 2>/dev/null
mp -p "$PID" -e 'mallctl stats.allocated'
check "the lock of a SIGKILLed holder is free at once" test "$RC" = 0
check "the next session reads the process" grep -q '^stats.allocated: [0-9]' <<<"$OUT"
assert_untouched "$PID"
