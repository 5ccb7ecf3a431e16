# mallctl cannot hurt the process (issue 11, part A): every call is checked
# against jemalloc(3)'s table before a thread is stopped.  A read of a
# write-only name (it faulted inside jemalloc with its ctl mutex held and
# froze the process) is refused with no call made; read-or-write names are
# never both; a name without a value never acts; options are not values;
# values of the wrong type never reach the process; stats.* are fresh.
. "$SRCDIR/tests/integration/lib.sh"

# memprof bounded (a call that hangs the target must fail this test, not
# hang it), with one "pause ..." line per stop on stderr.
mpb() {
    OUT=$(MEMPROF_TRACE_PAUSES=1 timeout -s KILL $((60 * SLOW)) "$MEMPROF" "$@" 2>"$WORK/mp.stderr"); RC=$?
    ERR=$(cat "$WORK/mp.stderr")
    printf '$ memprof %s\n%s\n%s\n(exit %d)\n' "$*" "$OUT" "$ERR" "$RC" >&2
}
# stops in which calls were made (attach reads the state in one)
stops() { grep -c '^pause .* calls=[1-9]' <<<"$ERR"; }
out_has() { grep -Eq -- "$1" <<<"$OUT"; }
err_has() { grep -Eq -- "$1" <<<"$ERR"; }
# a command refused, saying why, with no call made beyond attach's
refused_alone() {   # LABEL COMMAND STDERR-REGEX
    mpb -p "$PID" -e "$2"
    check "$1 refused" [ "$RC" -eq 1 ]
    check "$1: says why" err_has "$3"
    check "$1: no call made" [ "$(stops)" -eq 1 ]
}
no_heap_in() { [ -z "$(find "$1" -name 'jeprof*' -o -name '*.heap' -o -name -- '--json*')" ]; }

mkdir -p "$WORK/tcwd"
cd "$WORK/tcwd"
start_target grow_on_signal
cd "$WORK"

# 1. a write-only name read: refused, no call, the process fine afterwards
refused_alone "prof.prefix read" 'mallctl prof.prefix' "write it with 'mallctl prof.prefix VALUE'"
mpb -p "$PID" -e 'mallctl stats.allocated'
check "stats.allocated answers afterwards" out_has '^stats.allocated: [1-9][0-9]*$'
check "the process is fine" alive "$PID"

# read OR write: a write does not read in the same call
mpb -p "$PID" -e 'mallctl thread.prof.name worker-a' -e 'mallctl thread.prof.name'
check "thread.prof.name write and read" [ "$RC" -eq 0 ]
check "thread.prof.name written" out_has '^thread.prof.name: set to worker-a$'
check "thread.prof.name read" out_has '^thread.prof.name: '

# 2. a name without a value never acts
refused_alone "bare prof.dump" 'mallctl prof.dump' "use 'dump'"
refused_alone "bare prof.reset" 'mallctl prof.reset' "use 'prof reset'"
refused_alone "arena.0.reset without --force" 'mallctl arena.0.reset' 'discards every allocation.*--force'

# 3. options are not values; -- ends them
mpb -p "$PID" -e 'mallctl prof.dump --nosuch'
check "--nosuch is an unknown option" [ "$RC" -eq 1 ]
check "--nosuch: says so" err_has "unknown option '--nosuch'"
mpb -p "$PID" -e 'mallctl prof.dump --json'    # --json is an option: a bare prof.dump
check "prof.dump --json refused" [ "$RC" -eq 1 ]
mpb -p "$PID" -e 'mallctl prof.prefix --json'
check "prof.prefix --json refused" [ "$RC" -eq 1 ]
check "no dump written in the target's cwd" no_heap_in "$WORK/tcwd"
mpb -p "$PID" -e 'mallctl thread.prof.name -dash'
check "a value starting with - needs --" err_has "goes after '--'"
mpb -p "$PID" -e 'mallctl thread.prof.name -- -dash'
check "-- then a value starting with -" out_has '^thread.prof.name: set to -dash$'

# wrong type or length never reaches the process
refused_alone "prof.active 5" 'mallctl prof.active 5' 'not a boolean'
refused_alone "--type against the table" 'mallctl opt.narenas --type uint64_t' 'opt.narenas has type unsigned'
refused_alone "arena index out of range" 'mallctl arena.5000.purge' 'MALLCTL_ARENAS_ALL'

# a name the table lacks (newer than the page) works with --type
mpb -p "$PID" -e 'mallctl opt.prof_sys_thread_name --type bool'
check "unknown name with --type read" out_has '^opt.prof_sys_thread_name: (true|false)$'
mpb -p "$PID" -e 'mallctl opt.prof_sys_thread_name'
check "unknown name without --type refused" err_has 'give it with --type'

# 4. stats are refreshed in the same stop: a first read after growth sees it
mpb -p "$PID" -e 'mallctl stats.allocated'
before=$(sed -n 's/^stats.allocated: //p' <<<"$OUT")
kill -USR1 "$PID"
wait_until 30 "the target grew by 64 MiB" grep -q '^grown 64$' "$TARGET_OUT"
mpb -p "$PID" -e 'mallctl stats.allocated'
after=$(sed -n 's/^stats.allocated: //p' <<<"$OUT")
check "stats.allocated sees the 64 MiB growth ($before -> $after)" \
    [ "$((${after:-0} - ${before:-0}))" -ge $((60 * 1024 * 1024)) ]
mpb -p "$PID" -e 'mallctl epoch 1'
check "a write of epoch says what it did" out_has '^epoch: statistics refreshed$'

check "the target is untouched" assert_untouched "$PID"
check "no dump left in the target's cwd" no_heap_in "$WORK/tcwd"
echo "mallctl guard ok"
