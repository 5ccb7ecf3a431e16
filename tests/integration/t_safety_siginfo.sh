# Signals that reach the thread memprof holds keep their sender: under a
# storm of kill()-sent SIGUSR1 (from a child process) and the SIGCHLD of
# children that exit, during hundreds of stops, every SIGUSR1 the program
# handles says SI_USER and the storm child's pid, every SIGCHLD CLD_EXITED
# and the pid of one of its children.  memprof used to give back a signal
# the thread had dequeued before the interrupt stop with tgkill, which
# makes it SI_TKILL from memprof's pid.  The counts must grow during the
# sessions and the stops must be made, so that the check cannot pass on
# nothing.
#
# Then a SIGSEGV is sent with kill() while the borrowed thread is inside a
# call (blocked on the dump FIFO): it is the program's, not a fault of the
# call, so the call goes on, and the signal reaches the program once after
# it, with SI_USER and its sender's pid (memprof used to abort the call as
# "faulted" and drop the signal).
. "$SRCDIR/tests/integration/lib.sh"

start_target siginfo_storm
# report: ask for the counts and wait for the new line; sets USR1 USR1_ALTERED
# CHLD CHLD_ALTERED from it.
reports=0
report() {
    kill -USR2 "$PID"
    reports=$((reports + 1))
    wait_until 10 "the target's report" \
        eval '[ "$(grep -c "^SIGINFO" "$TARGET_OUT")" -ge "$reports" ]'
    local line
    line=$(grep '^SIGINFO' "$TARGET_OUT" | tail -1)
    echo "target: $line" >&2
    USR1=$(sed 's/.* usr1=\([0-9]*\).*/\1/' <<<"$line")
    USR1_ALTERED=$(sed 's/.*usr1_altered=\([0-9]*\).*/\1/' <<<"$line")
    CHLD=$(sed 's/.* chld=\([0-9]*\).*/\1/' <<<"$line")
    CHLD_ALTERED=$(sed 's/.*chld_altered=\([0-9]*\).*/\1/' <<<"$line")
    SEGV=$(sed 's/.* segv=\([0-9]*\).*/\1/' <<<"$line")
    SEGV_FROM=$(sed 's/.* segv_code=\(-*[0-9]*\) segv_pid=\([0-9]*\).*/\1 \2/' <<<"$line")
}

report
usr1_before=$USR1 chld_before=$CHLD
: >"$WORK/onoff"
for i in $(seq 50); do printf 'prof on\nprof off\n' >>"$WORK/onoff"; done
: >"$WORK/pauses"
for round in $(seq 10); do
    MEMPROF_TRACE_PAUSES=1 mp -p "$PID" -x "$WORK/onoff"
    assert_ok
    grep '^pause ' <<<"$ERR" >>"$WORK/pauses"
done
report
stops=$(grep -vc refused "$WORK/pauses")
echo "stops=$stops usr1 +$((USR1 - usr1_before)) chld +$((CHLD - chld_before))" >&2

check "memprof made its stops" [ "$stops" -ge 500 ]
check "SIGUSR1 arrived during the sessions" [ "$USR1" -gt "$usr1_before" ]
check "SIGCHLD arrived during the sessions" [ "$CHLD" -gt "$chld_before" ]
check "no SIGUSR1 changed its si_code or si_pid" [ "$USR1_ALTERED" -eq 0 ]
check "no SIGCHLD changed its si_code or si_pid" [ "$CHLD_ALTERED" -eq 0 ]
assert_untouched "$PID"

segv_before=$SEGV
start_blocked_dump
# The sender's pid is the shell's that execs kill.
sh -c 'echo $$ >"$1"; exec /bin/kill -SEGV "$2"' sh "$WORK/sender" "$PID"
timeout $((10 * SLOW)) cat "$WORK/dumpfifo" >/dev/null   # no writer if the call was abandoned
wait "$MP"
mp_rc=$?
echo "memprof: $(cat "$WORK/mp.err")" >&2
check "the call went on under a kill()-sent SIGSEGV" [ "$mp_rc" -eq 0 ]
# The signal is the main thread's to take when it next runs, which may be
# after the report of a SIGUSR2 sent now: ask again until it is counted.
segv_counted() { report; [ "$SEGV" -gt "$segv_before" ]; }
wait_until 10 "the SIGSEGV to be handled" segv_counted
check "that SIGSEGV arrived once" [ "$SEGV" -eq $((segv_before + 1)) ]
check "with SI_USER and its sender's pid" [ "$SEGV_FROM" = "0 $(cat "$WORK/sender")" ]
assert_untouched "$PID"
assert_no_dump_dirs
