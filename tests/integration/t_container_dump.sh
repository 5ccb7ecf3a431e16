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
    wait_until 20 "the contained target to print ready: $(cat "$WORK/contained.stderr")" \
        grep -q '^ready' "$out"
    PID=$(pgrep -P "$ns")
    [ -n "$PID" ] || die "no target under unshare $ns"
    PIDS+=("$PID")
    [ "$(readlink "/proc/$PID/ns/mnt")" != "$(readlink /proc/self/ns/mnt)" ] ||
        die "the target shares memprof's mount namespace"
}
memprof_dirs_in() { find "$1" -maxdepth 1 -name 'memprof.*' 2>/dev/null; }
none_in() {
    [ -z "$(memprof_dirs_in "$1")" ] && return 0
    echo "  left in $1: $(memprof_dirs_in "$1")" >&2
    return 1
}

start_contained rw,mode=1777
mp -p "$PID" -e 'prof on' -e 'dump' -e 'prof off'
check "contained: the session ran" mp_ok
check "contained: the dump was read back" out_has '^dump1: [0-9]+ stacks'
check "contained: the process is left running, untraced" untouched "$PID"
check "contained: nothing left in the target's /tmp" none_in "/proc/$PID/root/tmp"
check "contained: nothing left in memprof's TMPDIR" no_dump_dirs

# While a session is open (its commands come from a FIFO held open until
# the checks are done), the directory lives in the target's /tmp only.
open_session open
echo dump >&3
wait_until 10 "the dump in an open session" grep -q '^dump1' "$WORK/open.out"
check "open session: the directory is in the target's /tmp" \
    [ -n "$(memprof_dirs_in "/proc/$PID/root/tmp")" ]
check "open session: not in memprof's TMPDIR" no_dump_dirs
close_session
check "open session: ends with exit 0 on EOF" [ "$MPRC" -eq 0 ]
check "open session: its directory is removed" none_in "/proc/$PID/root/tmp"

# A read-only /tmp: a clear error, the target untouched.
start_contained ro
mp -p "$PID" -e dump
check "read-only /tmp: fails" mp_failed
check "read-only /tmp: says why" \
    err_has "cannot create a dump directory in /tmp of process $PID .*Read-only file system"
check "read-only /tmp: the process is left running, untraced" untouched "$PID"

# A TMPDIR that does not exist: the same, naming it.
TMPDIR=/nonexistent-memprof-test start_target plain
mp -p "$PID" -e dump
check "missing TMPDIR: fails" mp_failed
check "missing TMPDIR: names it" \
    err_has "cannot create a dump directory in /nonexistent-memprof-test of process $PID .*No such file"
check "missing TMPDIR: the process is left running, untraced" untouched "$PID"
check "no dump directory left" no_dump_dirs
