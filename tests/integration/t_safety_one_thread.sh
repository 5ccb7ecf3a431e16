# Only the chosen thread ever stops (FIELD-NOTES 3, rule 7).  The call is
# held open deterministically (`mallctl prof.dump FIFO` waits in open()
# inside mallctl until the test reads the FIFO); meanwhile exactly one task
# of the 9-thread target is traced, none other is stopped, and the other
# eight keep running (their CPU time grows) and verifying their data.
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
for i in $(seq 200); do [ -n "$(traced_tasks)" ] && break; sleep 0.05; done
held=$(traced_tasks)
[ "$(wc -w <<<"$held")" -eq 1 ] || die "expected exactly one traced task, got: '$held'"

cpu_of_others() {
    local t sum=0
    for t in /proc/$PID/task/*; do
        [ "$(basename "$t")" = "$held" ] && continue
        case "$(awk '/^State:/ {print $2}' "$t/status")" in
        T|t) die "task $(basename "$t") is stopped while $held is borrowed" ;;
        esac
        sum=$((sum + $(awk '{print $14 + $15}' "$t/stat")))
    done
    echo "$sum"
}
before=$(cpu_of_others)
sleep 1
after=$(cpu_of_others)
[ "$after" -gt "$before" ] || die "the other threads made no progress ($before -> $after ticks)"
[ "$(traced_tasks)" = "$held" ] || die "another task got traced"

cat "$WORK/fifo" >"$WORK/dump.heap"       # release the call
wait "$MP" || die "memprof failed: $(cat "$WORK/mp.err")"
head -1 "$WORK/dump.heap" | grep -q '^heap_v2/' || die "the held dump is not a profile"
assert_untouched "$PID"
sleep 1.2
grep -q CORRUPT "$TARGET_OUT" && die "the target found corrupt data"
tail -1 "$TARGET_OUT" | grep -q '^checked [0-9]' || die "the target stopped reporting"
echo "one thread only: other threads ran $((after - before)) ticks while $held was held"
