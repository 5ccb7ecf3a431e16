# A target in its own mount namespace with a private tmpfs on /tmp (as in
# a container): its /tmp is not memprof's.  `dump` goes through a memfd of
# the target's, which works there too and leaves nothing in either /tmp;
# with the private directory forced (MEMPROF_TEST_NO_MEMFD=1), it is made
# inside the target's /tmp (through /proc/PID/root) and removed.  A
# read-only /tmp in the target's namespace does not stop dumps; without
# /proc there, memprof falls back to the directory by itself.  A target
# in its own PID and mount namespaces on the host's filesystem that exits
# mid-session still has the private directory removed (issue 13.7).
. "$SRCDIR/tests/integration/lib.sh"

# The private /tmp hides everything under the real one, and the build (and
# so $TARGETS) may live there: run a copy of the target from /var/tmp.
bindir=$(mktemp -d /var/tmp/memprof-contained.XXXXXX)
trap 'rc=$?; rm -rf "$bindir"; (exit $rc); cleanup' EXIT
cp "$TARGETS/plain" "$bindir/plain"

# Run the target under unshare with /tmp mounted with options $1 (then
# command $2 run there); sets PID to the target itself (unshare's child).
start_contained() {
    local out="$WORK/contained.$RANDOM.stdout"
    # Its TMPDIR (the test's, under the real /tmp) is hidden there: unset.
    env -u TMPDIR MALLOC_CONF=prof:true,prof_active:false unshare --mount --propagation private --fork \
        sh -c "mount -t tmpfs -o $1 memprof-test /tmp && ${2:-true} && exec \"$bindir/plain\"" \
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
memprof_dirs_in() { find "$1" -maxdepth 1 \( -name 'memprof.*' -o -name 'memprof-[0-9]*-*' \) 2>/dev/null; }
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

# While a session is open: nothing with a name anywhere; with the private
# directory forced, it lives in the target's /tmp only.
# open_session PREFIX...: memprof (run behind PREFIX) dumps once and stays
# open, reading its commands from a FIFO held on fd 4, for as long as the
# checks take (a 'sleep 3' there was a guess at how long they take);
# close_open ends it (end of input) and waits for it.
open_session() {
    rm -f "$WORK/open.cmds"; mkfifo "$WORK/open.cmds"
    "$@" "$MEMPROF" -p "$PID" <"$WORK/open.cmds" >"$WORK/open.out" 2>"$WORK/open.err" &
    MP=$!
    exec 4>"$WORK/open.cmds"
    echo dump >&4
    wait_until 20 "a dump in an open session" grep -q '^dump1' "$WORK/open.out"
}
close_open() { exec 4>&-; wait "$MP"; }
open_session env
check "memfd: nothing in the target's /tmp during the session" \
    [ -z "$(memprof_dirs_in "/proc/$PID/root/tmp")" ]
close_open || die "the open session failed: $(cat "$WORK/open.err")"
open_session env MEMPROF_TEST_NO_MEMFD=1
check "directory: the session directory is in the target's /tmp" \
    [ -n "$(memprof_dirs_in "/proc/$PID/root/tmp")" ]
check "directory: the note names it" grep -q "private directory /tmp/memprof-" "$WORK/open.err"
assert_no_dump_dirs
close_open || die "the open session failed: $(cat "$WORK/open.err")"
check "directory: removed at the end" [ -z "$(memprof_dirs_in "/proc/$PID/root/tmp")" ]

# A read-only /tmp: the dump works; the forced private directory goes to
# the first writable candidate (/var/tmp, shared with the host here).
start_contained ro
mp -p "$PID" -e dump
assert_ok
assert_out '^dump1: '
MEMPROF_TEST_NO_MEMFD=1 mp -p "$PID" -e dump
assert_ok
assert_err "private directory /var/tmp/memprof-"
check "read-only /tmp: nothing left in /var/tmp" \
    [ -z "$(memprof_dirs_in /var/tmp)" ]
assert_untouched "$PID"

# No /proc where the target runs: jemalloc cannot open the memfd by its
# /proc/thread-self/fd name, and memprof falls back to a private directory
# by itself, saying why, and removes it.
start_contained rw,mode=1777 "mount -t tmpfs memprof-noproc /proc"
mp -p "$PID" -e 'prof on' -e dump -e dump -e 'prof off'
assert_ok
assert_out '^dump2: '
check "no /proc: the fallback says why" grep -q 'private directory /tmp/memprof-.*is /proc mounted where it runs' <<<"$ERR"
check "no /proc: no memfd left open" [ -z "$(find "/proc/$PID/fd" -lname '/memfd:memprof*' 2>/dev/null)" ]
check "no /proc: nothing left in the target's /tmp" [ -z "$(memprof_dirs_in "/proc/$PID/root/tmp")" ]

# Its own PID and mount namespaces, the host's filesystem: the private
# directory (in the test's TMPDIR) is removed although the target exits
# while the session is open and its /proc/PID/root is gone.
env MALLOC_CONF=prof:true,prof_active:false unshare --pid --mount --fork --mount-proc \
    "$bindir/plain" >"$WORK/pidns.out" 2>"$WORK/pidns.err" &
ns=$!
PIDS+=("$ns")
wait_until 20 "the target in its PID namespace" grep -qs '^ready' "$WORK/pidns.out"
PID=$(pgrep -P "$ns")
[ -n "$PID" ] || die "no target under unshare $ns"
open_session env MEMPROF_TEST_NO_MEMFD=1
[ -n "$(dump_dirs)" ] || die "no session directory in the target's TMPDIR $TMPDIR"
kill -9 "$PID"
close_open
check "exited mid-session: the directory was removed" [ -z "$(dump_dirs)" ]
echo "container dump ok"
