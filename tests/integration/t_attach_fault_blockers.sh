# A thread that blocks a fault signal (SIGSEGV, SIGBUS, ...) is borrowed
# last of its rank: a call that faulted there would have the kernel reset
# the program's handler to SIG_DFL.  fault_blockers has two threads asleep
# alike in nanosleep; with the main thread (the lowest tid, chosen first
# otherwise) blocking SIGSEGV and SIGBUS, memprof's call goes to the
# helper; with no mask, to the main thread, so the check cannot pass by tid
# order alone.  Each of three sessions makes one stop, once both threads
# sleep (a thread memprof just resumed runs for a moment, and a running
# thread ranks below a sleeping one whatever its mask).
. "$SRCDIR/tests/integration/lib.sh"

both_asleep() {
    local t
    for t in "$PID" "$helper"; do
        [ "$(awk '{print $3}' "/proc/$PID/task/$t/stat")" = S ] || return 1
    done
}

three_used() { [ "$RC" = 0 ] && [ "$(wc -w <<<"$used")" = 3 ]; }

for mode in none main; do
    start_target fault_blockers "$mode"
    helper=$(awk '/^helper/ {print $2; exit}' "$TARGET_OUT")
    want=$PID; [ "$mode" = main ] && want=$helper
    used=
    for i in 1 2 3; do
        wait_until 10 "both threads to sleep" both_asleep
        MEMPROF_TRACE_PAUSES=1 mp -p "$PID" -e 'mallctl stats.allocated'
        [ "$RC" = 0 ] || break
        used="$used $(grep -Eo '^pause tid=[0-9]+ .* calls=[1-9]' <<<"$ERR" | head -1 | sed -E 's/^pause tid=([0-9]+).*/\1/')"
    done
    echo "$mode: main $PID, helper $helper; threads used:$used" >&2
    check "$mode: three sessions worked, each with a call" three_used
    if [ "$mode" = none ]; then
        check "no mask: each call went to the main thread (the lowest tid)" \
            [ "$used" = " $PID $PID $PID" ]
    else
        check "main thread blocks SIGSEGV: each call went to the helper" \
            [ "$used" = " $helper $helper $helper" ]
    fi
    check "$mode: the process is left running, untraced" untouched "$PID"
    kill -9 "$PID"
done
