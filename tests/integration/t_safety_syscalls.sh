# A thread stopped inside nanosleep must sleep its full time after the
# call (restart, not EINTR), and not start it over; one blocked in read()
# on a FIFO must get the whole message later, with no EINTR.  Both programs are single-threaded,
# so memprof has to stop exactly that thread.
. "$SRCDIR/tests/integration/lib.sh"

start_target sleepers sleep
toggles 20
mp -p "$PID" -x "$WORK/toggles"
check "nanosleep: memprof ran 20 rounds" mp_ok
# two more whole sleeps (1.5 s each) after the session, none early
n=$(grep -c '^sleeps' "$TARGET_OUT")
sleeps_or_damage() { grep -q "^sleeps $((n + 2))\$\|EARLY\|BAD" "$TARGET_OUT"; }
wait_until 8 "two more sleeps of the sleeper" sleeps_or_damage
check "nanosleep: no sleep ended early" file_lacks "$TARGET_OUT" 'EARLY|BAD'
# the interrupted sleep goes on to its end (restart_syscall) rather than
# starting over, which 60 stops in a row would stretch past twice its time
check "nanosleep: no sleep started over" file_lacks "$TARGET_OUT" 'LONG'
check "nanosleep: two more whole sleeps" file_has "$TARGET_OUT" "^sleeps $((n + 2))\$"
check "nanosleep: the process is left running, untraced" untouched "$PID"

mkfifo "$WORK/fifo"
start_target sleepers read "$WORK/fifo"
mp -p "$PID" -x "$WORK/toggles"
check "read: memprof ran 20 rounds" mp_ok
check "read: the parked read gets the whole message" holds check_reader "$WORK/fifo"
check "read: the process is left running, untraced" untouched "$PID"
check "no dump directory left" no_dump_dirs
