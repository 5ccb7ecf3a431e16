# A process under a seccomp allow-list filter survives memprof: skipping
# the trampoline's rt_sigreturn at its entry stop must not show the filter
# a system call it would refuse (it would kill the process), so memprof
# suspends the filter while it holds the thread.  Also when several calls
# are made in one stop (prof sample: read, then write).
. "$SRCDIR/tests/integration/lib.sh"

start_target seccomp_filtered
check "the target runs under a seccomp filter" file_has "/proc/$PID/status" '^Seccomp:[[:space:]]*2'
toggles 3
mp -p "$PID" -x "$WORK/toggles" -e 'prof sample 19' -e info
check "the session ran" mp_ok
check "prof sample took effect" out_has 'prof.lg_sample +19'
check "the dumps were made" out_has '^dump3: [0-9]+ stacks'
check "the process is left running, untraced" untouched "$PID"
# The filter judges the thread's next system call: wait until the main
# thread is back in its futex wait (pthread_join), so it has made it.
in_futex_wait() { [ "$(cut -d' ' -f1 "/proc/$PID/task/$PID/syscall" 2>/dev/null)" = 202 ]; }
check "the main thread went back to its futex wait" within 5 in_futex_wait
check "and the process lives on" untouched "$PID"
check "the filter is still there" file_has "/proc/$PID/status" '^Seccomp:[[:space:]]*2'
check "no dump directory left" no_dump_dirs

# Without CAP_SYS_ADMIN the filter cannot be suspended: memprof (run as
# nobody, on a filtered process of its own, also started as nobody)
# refuses with the reason and the remedy, before stopping anything, and
# the process lives on.
[ "$(id -u)" -eq 0 ] || die "this test must run as root"
dir=$(mktemp -d /tmp/memprof-nobody.XXXXXX)      # not under $WORK (0700)
trap 'cleanup; rm -rf "$dir"' EXIT
cp "$MEMPROF" "$TARGETS/seccomp_filtered" "$dir/"
chown nobody "$dir"
chmod 755 "$dir"
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups env -u TMPDIR DIR="$dir" sh -c "$1"; }
as_nobody 'MALLOC_CONF=prof:true,prof_active:false "$DIR/seccomp_filtered" >"$DIR/target.out" 2>&1 &
    echo $! >"$DIR/target.pid"'
PID=$(cat "$dir/target.pid")
PIDS+=("$PID")
wait_until 20 "the unprivileged target to print ready" grep -q '^ready' "$dir/target.out"
as_nobody '"$DIR/memprof" -p '"$PID"' -e "prof on" >"$DIR/mp.out" 2>"$DIR/mp.err"; echo $? >"$DIR/mp.rc"'
check "unprivileged memprof: exit 1" [ "$(cat "$dir/mp.rc")" = 1 ]
check "unprivileged memprof: gives the reason and the remedy" \
    file_has "$dir/mp.err" 'runs under a seccomp filter.*CAP_SYS_ADMIN: run memprof as root'
check "unprivileged memprof: the process is left as it was" untouched "$PID"
