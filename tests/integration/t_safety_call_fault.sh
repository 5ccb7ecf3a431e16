# A call that faults inside the allocator leaves it in an unknown state (a
# lock it took may stay held by the thread).  tests/targets/faulty_hooks
# has an arena whose extent hooks fault when a hijacked thread runs them,
# so `mallctl arena.N.purge` faults mid-purge.  memprof must say what
# happened and that a lock may be held (never "its state was restored"),
# put the thread back, and make no further call into the process in that
# session: later commands that need one fail saying why, `info` shows it,
# detach still works.  The process survives, untraced.
. "$SRCDIR/tests/integration/lib.sh"

arena_of() { awk '/^arena/ {print $2}' "$TARGET_OUT"; }
lacks() { ! grep -q "$@"; }

# --- batch: the message -------------------------------------------------------
start_target faulty_hooks
mp -p "$PID" -e "mallctl arena.$(arena_of).purge"
check "batch: exits 1" [ "$RC" = 1 ]
check "batch: says the call faulted" grep -q "the call faulted with signal 11" <<<"$ERR"
check "batch: says an allocator lock may be held by the thread" \
    grep -q "an allocator lock may now be held by thread $PID" <<<"$ERR"
check "batch: never says its state was restored" lacks "state was restored" <<<"$ERR"
assert_untouched "$PID"

# --- at the prompt: no further call in the session --------------------------------
start_target faulty_hooks
printf 'mallctl arena.%s.purge\nmallctl stats.allocated\ninfo\ndetach\nquit\n' "$(arena_of)" |
    HOME="$WORK" script -qec "$MEMPROF -p $PID" /dev/null >"$WORK/prompt.out" 2>&1
cat "$WORK/prompt.out"; echo
check "prompt: the purge faulted" grep -q "the call faulted" "$WORK/prompt.out"
check "prompt: a later call is refused, saying why" \
    grep -q "no further call into it in this session" "$WORK/prompt.out"
check "prompt: no later call was made" lacks "stats.allocated: [0-9]" "$WORK/prompt.out"
check "prompt: info shows the refusal" grep -Eq "calls +refused: a call faulted" "$WORK/prompt.out"
check "prompt: detach works" grep -q "detached from process $PID" "$WORK/prompt.out"
assert_untouched "$PID"

# --- a call that waits on a lock its own thread holds ---------------------------
# (faulty_hooks own_lock: the hijacked thread's hook takes a mutex that the
# same thread took before; a thread borrowed while it held an allocator
# lock would wait the same way.)  The call is left after the time allowed,
# saying it will never return and that the process must be restarted; the
# process lives on, untraced, its other threads untouched.
CONF=prof:true,prof_active:false start_target faulty_hooks own_lock
MEMPROF_CALL_TIMEOUT=2 mp -p "$PID" -e "mallctl arena.$(arena_of).purge"
check "own lock: exits 1" [ "$RC" = 1 ]
check "own lock: says the thread waits on a lock it holds itself" \
    err_has "thread $PID is blocked in [a-z_]+ \(system call [0-9]+\), on a lock \(mutex at 0x[0-9a-f]+\) that it holds itself, which only it can release: the call will never return"
check "own lock: says to restart the process" err_has "Restart process $PID \(no tool can release the lock\)"
check "own lock: never says the thread will restore itself" lacks "restores itself" <<<"$ERR"
check "own lock: the process lives on, untraced" untouched "$PID"

