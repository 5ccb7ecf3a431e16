# A process that chroot()ed (as a daemon does inside its container) is
# walked as one that did not: its /proc/PID/maps names paths outside its
# root, which under /proc/PID/root name nothing, so the unwind tables are
# read from the objects as the process has them mapped (.eh_frame_hdr).
# Before, libunwind-ptrace found no table there, its frame-pointer guess
# ended every walk one or two frames in as if at the stack's base, and a
# thread inside jemalloc was taken as safe: a prof.dump borrowed a thread
# that held one of jemalloc's profiling locks and waited on it for good
# (seen as a call that did not return in 5 s, and a process whose
# allocating thread then hung).  Here the main thread of unsafe_frames
# parks in read() inside a jemalloc extent hook, under mallocx(), below a
# frame that zeroes rbp (as code built without frame pointers may): it
# must be refused as inside jemalloc, and the helper used.  Outside any
# chroot, a frame with no unwind table at all (and rbp 0) ends libunwind's
# walk as if at the stack's base: the thread is refused, naming that
# frame, not taken as safe.  Then
# a churning jemalloc process sampling every allocation (lg_prof_sample:0)
# in a chroot is dumped again and again: each dump returns and the process
# keeps allocating.
. "$SRCDIR/tests/integration/lib.sh"

JAIL=$(mktemp -d /var/tmp/memprof-jail.XXXXXX)
unmount_jail() { umount "$JAIL/proc" 2>/dev/null; rm -rf "$JAIL"; }
CLEANUP_HOOKS+=(unmount_jail)
mkdir -p "$JAIL/tmp" "$JAIL/proc"
chmod 1777 "$JAIL/tmp"
# the programs and what ldd lists for them, copied as the host has them
for prog in unsafe_frames grow_on_signal; do
    cp "$TARGETS/$prog" "$JAIL/$prog"
    for l in $(ldd "$TARGETS/$prog" | grep -o '/[^ ]*'); do
        mkdir -p "$JAIL$(dirname "$l")"
        cp -L "$l" "$JAIL$l"
    done
done

# jailed CONF NAME ARGS...: NAME run chrooted in JAIL (with a /proc, in a
# mount namespace of its own), its output in $TARGET_OUT; sets PID.
jailed() {
    local conf=$1 name=$2
    shift 2
    TARGET_OUT=$WORK/jailed.$name.out
    MALLOC_CONF=$conf unshare --mount --propagation private --fork sh -c \
        'mount -t proc proc "$0/proc" && exec chroot "$0" "$@"' "$JAIL" "/$name" "$@" \
        >"$TARGET_OUT" 2>"$WORK/$name.stderr" &
    local ns=$!
    PIDS+=("$ns")
    wait_until 20 "$name ready in the chroot: $(cat "$WORK/$name.stderr")" \
        grep -q '^ready' "$TARGET_OUT"
    PID=$(pgrep -P "$ns")
    [ -n "$PID" ] || die "no process under unshare $ns"
    PIDS+=("$PID")
}

# refused_parked WHAT FIFO WHY: the main thread of unsafe_frames ($PID),
# parked, is refused for WHY and the helper takes the calls; released
# through FIFO, it finishes its read whole.
refused_parked() {
    local what=$1 fifo=$2 why=$3 helper
    helper=$(awk '/^helper/ {print $2}' "$TARGET_OUT")
    [ "${helper:-0}" -gt "$PID" ] || die "helper tid $helper is below $PID: main would not be tried first"
    MEMPROF_TRACE_PAUSES=1 mp -p "$PID" -e 'prof on' -e 'prof off'
    check "$what: the session ran" mp_ok
    check "$what: the parked thread was refused ($why)" err_has "^pause tid=$PID .* refused \($why"
    check "$what: no call on it" err_lacks "^pause tid=$PID .* calls=[1-9]"
    check "$what: the helper thread took the calls" err_has "^pause tid=$helper .* calls=[1-9]"
    check "$what: the process is left running, untraced" untouched "$PID"
    printf 'memprof-unsafe-frame-message\n' >"$fifo"
    check "$what: the parked thread finishes its read" within 10 file_has "$TARGET_OUT" '^finished'
    check "$what: the message arrived whole" file_has "$TARGET_OUT" '^unsafe read ok'
}

# --- a thread parked inside jemalloc, in the chroot ---------------------------
mkfifo "$JAIL/tmp/fifo"
jailed prof:true,prof_active:false unsafe_frames extent_nofp /tmp/fifo
check "the process runs in the chroot" [ "$(readlink "/proc/$PID/root")" = "$JAIL" ]
check "its maps name paths its root does not have" \
    holds eval '! [ -e "/proc/$PID/root$(readlink "/proc/$PID/exe")" ]'
refused_parked "chroot, extent hook" "$JAIL/tmp/fifo" 'inside jemalloc'

# --- a frame no unwind table covers (no chroot) ----------------------------------
mkfifo "$WORK/fifo.nocfi"
start_target unsafe_frames extent_nocfi "$WORK/fifo.nocfi"
refused_parked "no table" "$WORK/fifo.nocfi" \
    'its stack cannot be walked past the frame at pc 0x[0-9a-f]+ \(unsafe_frames\): no unwind table covers it'

# --- every allocation sampled, dumped while a thread churns --------------------
jailed prof:true,prof_active:true,lg_prof_sample:0 grow_on_signal
CHURNER=$PID
ok=0
for i in $(seq 60); do
    mp -p "$CHURNER" -e dump
    [ "$RC" = 0 ] || break
    ok=$((ok + 1))
done
check "lg_prof_sample:0 in a chroot: 60 dumps in a row returned ($ok did)" [ "$ok" = 60 ]
kill -USR1 "$CHURNER"
check "lg_prof_sample:0 in a chroot: the process still allocates" \
    within 20 file_has "$TARGET_OUT" '^grown 64'
check "lg_prof_sample:0 in a chroot: untouched" untouched "$CHURNER"
echo "unwind in a chroot ok"
