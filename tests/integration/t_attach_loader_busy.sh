# A process whose dynamic loader has not finished (just started or exec'd;
# here held deterministically: its LD_PRELOAD names a FIFO, and the loader
# waits in open() of it before mapping any library, jemalloc included):
#  - memprof does not call it a process without jemalloc: it waits a
#    little for the loader, then says the process is still loading its
#    libraries and to attach again, and leaves it untouched;
#  - when the loader goes on while memprof waits (the FIFO is opened: the
#    loader drops the preload as too short and maps the rest), the same
#    session attaches and works.
. "$SRCDIR/tests/integration/lib.sh"

mkfifo "$WORK/preload"
LD_PRELOAD=$WORK/preload MALLOC_CONF=prof:true,prof_active:false "$TARGETS/plain" \
    >"$WORK/plain.out" 2>"$WORK/plain.err" &
PID=$!
PIDS+=("$PID")
TARGET_OUT=$WORK/plain.out
loader_blocked() {
    case " $OPEN_SYSCALLS " in *" $(cut -d' ' -f1 "/proc/$PID/syscall" 2>/dev/null) "*) ;; *) return 1 ;; esac
    grep -q 'ld-linux' "/proc/$PID/maps" && ! grep -q 'libjemalloc' "/proc/$PID/maps"
}
wait_until 10 "the loader to wait in open() of the preload FIFO" loader_blocked

mp -p "$PID" -e 'mallctl stats.allocated'
check "memprof fails while the loader waits" mp_failed
check "it says the process is still loading its libraries" err_has "process $PID is still loading its libraries"
check "it does not say the process lacks jemalloc" err_lacks 'does not use jemalloc'
check "the process is left untouched" untouched "$PID"
check "its loader still waits" loader_blocked

"$MEMPROF" -p "$PID" -e 'mallctl stats.allocated' >"$WORK/mp.out" 2>"$WORK/mp.err" &
MP=$!
# memprof holds its session lock (an abstract socket) once it is attaching.
attaching() { grep -q "@memprof-session/[0-9]*/$PID/" /proc/net/unix; }
wait_until 10 "memprof to be attaching" attaching
: >"$WORK/preload"      # the loader reads an empty file, drops it, goes on
wait "$MP"; MPRC=$?
cat "$WORK/mp.err" >&2
check "a session started while the loader waited attaches once it is done" [ "$MPRC" = 0 ]
check "and reads the allocator" grep -Eq '^stats.allocated: [0-9]+' "$WORK/mp.out"
wait_until 10 "the program to start" grep -q '^ready' "$TARGET_OUT"
check "the process is left running, untraced" untouched "$PID"
check "no dump directory left" no_dump_dirs
