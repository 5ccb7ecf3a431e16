# A live process whose main thread has exited (pthread_exit in main: the
# main thread is a zombie, three others allocate) is worked through a live
# thread (issue 6.6): attach, prof on, dump, an analysis naming the
# workers' function, prof off, detach -- and the process is left running,
# untraced, no thread stopped, still allocating.
. "$SRCDIR/tests/integration/lib.sh"

# Sampled every 64 KiB (lg_prof_sample 16), not jemalloc's 512 KiB: the
# workers hold only about 3 MiB at any time, so at 512 KiB a dump held
# some 6.6 live samples on average and none at all once in 700 runs
# (e^-6.6), failing both checks on the dump; at 64 KiB it holds some 50.
CONF=prof:true,prof_active:false,lg_prof_sample:16 start_target zombie_leader
check "the main thread is a zombie" test "$(state_of "$PID")" = Z
check "other threads of it run" alive "$PID"

mp -p "$PID" -e info -e 'prof on' -e 'sleep 0.5' -e dump -e 'top 5' -e 'prof off' -e detach
check "memprof attaches and runs every command" test "$RC" = 0
# (the attach status line on stderr names the program, zombie_leader)
check "it is not refused as a zombie" bash -c "! grep -v '^attached to process' <<<\"\$1\" | grep -q zombie" _ "$ERR"
check "info shows the process" grep -Eq "^pid +$PID" <<<"$OUT"
check "prof on took effect" grep -q 'profiling is now on' <<<"$OUT"
check "the dump holds live memory" grep -Eq '^dump1: [0-9]+ stacks, [0-9.]+ [KM]iB in use' <<<"$OUT"
check "the analysis names the allocating function" grep -Eq '%.*worker$' <<<"$OUT"
check "prof off took effect" grep -q 'profiling is now off (was on)' <<<"$OUT"
check "memprof detached" grep -q "detached from process $PID" <<<"$OUT"

assert_untouched "$PID"
churned() { awk '/^churned/ {n = $2} END {print n + 0}' "$TARGET_OUT"; }
before=$(churned)
grown() { [ "$(churned)" -gt "$before" ]; }
wait_until 10 "the workers to keep allocating after the session" grown
check "the workers allocate after the session" grown
assert_no_dump_dirs
