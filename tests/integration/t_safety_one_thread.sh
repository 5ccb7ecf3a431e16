# Only the chosen thread ever stops (FIELD-NOTES 3, rule 7).  The call is
# held open deterministically (`mallctl prof.dump FIFO` waits in open()
# inside mallctl until the test reads the FIFO); meanwhile exactly one task
# of the 9-thread target is traced, none other is stopped, and each of the
# eight workers keeps verifying its data: its own count of verified blocks
# (read live from its memory) grows while the call is held.
. "$SRCDIR/tests/integration/lib.sh"
start_target stress8 report
mkfifo "$WORK/fifo"
# The call is held open for as long as the checks take: no call limit.
MEMPROF_CALL_TIMEOUT=3600 "$MEMPROF" -p "$PID" -e "mallctl prof.dump $WORK/fifo" >"$WORK/mp.out" 2>"$WORK/mp.err" &
MP=$!

traced_tasks() {
    local t
    for t in /proc/$PID/task/*; do
        [ "$(awk '/^TracerPid:/ {print $2}' "$t/status")" != 0 ] && basename "$t"
    done
}
others_not_stopped() {
    local t bad=
    for t in /proc/$PID/task/*; do
        [ "$(basename "$t")" = "$held" ] && continue
        case "$(awk '/^State:/ {print $2}' "$t/status")" in
        T|t) bad+=" $(basename "$t")" ;;
        esac
    done
    [ -z "$bad" ] && return 0
    echo "  stopped while $held is borrowed:$bad" >&2
    return 1
}
cpu_of_others() {
    local t sum=0
    for t in /proc/$PID/task/*; do
        [ "$(basename "$t")" = "$held" ] && continue
        sum=$((sum + $(awk '{print $14 + $15}' "$t/stat")))
    done
    echo "$sum"
}
worker_counts() { words_at "$PID" checked 8; }
workers_beyond() { all_grew "$1" "$(worker_counts)"; }
others_cpu_beyond() { [ "$(cpu_of_others)" -gt "$1" ]; }

some_task_traced() { [ -n "$(traced_tasks)" ]; }
wait_until 10 "memprof to trace a task of $PID" some_task_traced
held=$(traced_tasks)
check "exactly one task traced" [ "$(wc -w <<<"$held")" -eq 1 ]
check "no other task stopped" others_not_stopped
counts=$(worker_counts)
cpu=$(cpu_of_others)
check "every worker verified blocks while $held was held" within 5 workers_beyond "$counts"
check "the other threads ran while $held was held" within 5 others_cpu_beyond "$cpu"
echo "while $held was held: blocks verified per worker $counts -> $(worker_counts);" \
     "CPU ticks of the others $cpu -> $(cpu_of_others)"
check "the call was still held, by that task only" [ "$(traced_tasks)" = "$held" ]
check "still no other task stopped" others_not_stopped

cat "$WORK/fifo" >"$WORK/dump.heap"       # release the call
wait "$MP"; rc=$?
check "memprof exit 0 once the call returned" [ "$rc" -eq 0 ]
check "the held dump is a profile" is_heap_profile "$WORK/dump.heap"
check "the process is left running, untraced" untouched "$PID"
reports=$(grep -c '^checked' "$TARGET_OUT")
check "the target goes on reporting" within 5 count_above "$TARGET_OUT" '^checked [0-9]' "$reports"
check "no block found corrupt" file_lacks "$TARGET_OUT" CORRUPT
