# A process under a seccomp allow-list filter survives memprof: skipping
# the trampoline's rt_sigreturn at its entry stop must not show the filter
# a system call it would refuse (it would kill the process), so memprof
# suspends the filter while it holds the thread.  Also when several calls
# are made in one stop (prof sample: read, then write).
. "$SRCDIR/tests/integration/lib.sh"

start_target seccomp_filtered
grep -q '^Seccomp:[[:space:]]*2' "/proc/$PID/status" || die "the target has no seccomp filter"
toggles 3
mp -p "$PID" -x "$WORK/toggles" -e 'prof sample 19' -e info
assert_ok
assert_out 'prof.lg_sample +19'
assert_out '^dump3: [0-9]+ stacks'
assert_untouched "$PID"
sleep 0.2
assert_untouched "$PID"
grep -q '^Seccomp:[[:space:]]*2' "/proc/$PID/status" || die "the filter is gone"
assert_no_dump_dirs

# Without CAP_SYS_ADMIN the filter cannot be suspended: memprof (run as
# nobody, on a filtered process of its own, started by the same shell so
# that Yama's ptrace_scope 1 allows it) refuses with the reason and the
# remedy, before stopping anything, and the process lives on.
[ "$(id -u)" -eq 0 ] || die "this test must run as root"
dir=$(mktemp -d /tmp/memprof-nobody.XXXXXX)      # not under $WORK (0700)
trap 'cleanup; rm -rf "$dir"' EXIT
cp "$MEMPROF" "$TARGETS/seccomp_filtered" "$dir/"
chown nobody "$dir"
chmod 755 "$dir"
setpriv --reuid=nobody --regid=nogroup --clear-groups env -u TMPDIR DIR="$dir" sh -c '
    MALLOC_CONF=prof:true,prof_active:false "$DIR/seccomp_filtered" >"$DIR/target.out" &
    echo $! >"$DIR/target.pid"
    i=0; until grep -q ready "$DIR/target.out" || [ $i -gt 100 ]; do sleep 0.1; i=$((i+1)); done
    "$DIR/memprof" -p $! -e "prof on" >"$DIR/mp.out" 2>"$DIR/mp.err"
    echo $? >"$DIR/mp.rc"'
PID=$(cat "$dir/target.pid")
PIDS+=("$PID")
[ "$(cat "$dir/mp.rc")" = 1 ] || die "unprivileged memprof: exit $(cat "$dir/mp.rc"): $(cat "$dir/mp.err")"
grep -q 'runs under a seccomp filter.*CAP_SYS_ADMIN: run memprof as root' "$dir/mp.err" ||
    die "no reason or remedy: $(cat "$dir/mp.err")"
assert_untouched "$PID"
