# A target in its own mount namespace with a private tmpfs on /tmp (as in
# a container): its /tmp is not memprof's.  `dump` must create the session
# directory inside the target's /tmp (through /proc/PID/root), read the
# dump back, and leave nothing behind on either side.  A target whose
# dump location is missing or read-only gets a clear error.
. "$SRCDIR/tests/integration/lib.sh"

# The private /tmp hides everything under the real one, and the build (and
# so $TARGETS) may live there: run a copy of the target from /var/tmp.
bindir=$(mktemp -d /var/tmp/memprof-contained.XXXXXX)
trap 'cleanup; rm -rf "$bindir"' EXIT
cp "$TARGETS/plain" "$bindir/plain"

# Run the target under unshare with /tmp mounted as MOUNT_OPTS says;
# sets PID to the target itself (unshare's child).
start_contained() {
    local out="$WORK/contained.$RANDOM.stdout"
    # Its TMPDIR (the test's, under the real /tmp) is hidden there: unset.
    env -u TMPDIR MALLOC_CONF=prof:true,prof_active:false unshare --mount --propagation private --fork \
        sh -c "mount -t tmpfs -o $1 memprof-test /tmp && exec \"$bindir/plain\"" \
        >"$out" 2>"$WORK/contained.stderr" &
    local ns=$!
    PIDS+=("$ns")
    for i in $(seq 200); do grep -q '^ready' "$out" 2>/dev/null && break; sleep 0.1; done
    grep -q '^ready' "$out" || die "contained target not ready: $(cat "$WORK/contained.stderr")"
    PID=$(pgrep -P "$ns")
    [ -n "$PID" ] || die "no target under unshare $ns"
    PIDS+=("$PID")
    [ "$(readlink "/proc/$PID/ns/mnt")" != "$(readlink /proc/self/ns/mnt)" ] ||
        die "the target shares memprof's mount namespace"
}
memprof_dirs_in() { find "$1" -maxdepth 1 -name 'memprof.*' 2>/dev/null; }

start_contained rw,mode=1777
mp -p "$PID" -e 'prof on' -e 'dump' -e 'prof off'
assert_ok
assert_out '^dump1: [0-9]+ stacks'
assert_untouched "$PID"
[ -z "$(memprof_dirs_in "/proc/$PID/root/tmp")" ] ||
    die "left in the target's /tmp: $(memprof_dirs_in "/proc/$PID/root/tmp")"
assert_no_dump_dirs

# While a session is open, the directory lives in the target's /tmp only.
"$MEMPROF" -p "$PID" -e dump -e 'sleep 3' >"$WORK/open.out" 2>&1 &
MP=$!
for i in $(seq 50); do grep -q '^dump1' "$WORK/open.out" && break; sleep 0.1; done
grep -q '^dump1' "$WORK/open.out" || die "dump in an open session: $(cat "$WORK/open.out")"
[ -n "$(memprof_dirs_in "/proc/$PID/root/tmp")" ] || die "no session directory in the target's /tmp"
assert_no_dump_dirs
wait "$MP" || die "the open session failed: $(cat "$WORK/open.out")"
[ -z "$(memprof_dirs_in "/proc/$PID/root/tmp")" ] || die "the session directory was left behind"

# A read-only /tmp: a clear error, the target untouched.
start_contained ro
mp -p "$PID" -e dump
assert_fail
assert_err "cannot create a dump directory in /tmp of process $PID .*Read-only file system"
assert_untouched "$PID"

# A TMPDIR that does not exist: the same, naming it.
TMPDIR=/nonexistent-memprof-test start_target plain
mp -p "$PID" -e dump
assert_fail
assert_err "cannot create a dump directory in /nonexistent-memprof-test of process $PID .*No such file"
assert_untouched "$PID"
assert_no_dump_dirs
