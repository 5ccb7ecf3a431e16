# A process's cgroup memory with cgroup v2 alone in memprof's view, as on a
# unified-only host (issue 33: this host is hybrid, so the v2-only path
# of lib/proc/cgroup_memory.c is run here for real): memprof runs in a
# mount namespace of its own (unshare -m) where the host's cgroup mounts
# are gone and cgroup2 is mounted at /sys/fs/cgroup, nothing else; the
# target sits in a v2 cgroup made for it.  memprof must take the v2 path
# (no v1 memory mount in view, whatever /proc/PID/cgroup lists) and open
# that cgroup under /sys/fs/cgroup.  Where the host's v2 hierarchy has the
# memory controller (a unified host), 'memory --json' gives the cgroup's
# memory.current and memory.max as the files say; where it has not (a
# hybrid host binds it to v1), memprof says exactly that, naming the
# directory, instead of guessing at a cause.  Fixture trees of each layout
# are read by tests/unit/test_cgroup_memory.c.
. "$SRCDIR/tests/integration/lib.sh"

[ "$(id -u)" -eq 0 ] || die "this test must run as root"
V2=$(findmnt -n -t cgroup2 -o TARGET | head -1)
[ -n "$V2" ] || die "no cgroup2 file system is mounted on this host"
NAME=memprof-v2view-$$
mkdir "$V2/$NAME" || die "cannot create the cgroup $V2/$NAME"
cgroup_removed() {
    local p
    for p in $(cat "$V2/$NAME/cgroup.procs" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
    for _ in $(seq 200); do rmdir "$V2/$NAME" 2>/dev/null && break; sleep 0.05; done
}
CLEANUP_HOOKS+=(cgroup_removed)
HAS_MEMORY=0
if grep -qw memory "$V2/cgroup.controllers"; then
    HAS_MEMORY=1
    grep -qw memory "$V2/cgroup.subtree_control" || echo +memory >"$V2/cgroup.subtree_control"
    echo $((256 * 1048576)) >"$V2/$NAME/memory.max"
fi
echo "cgroup2 at $V2, memory controller there: $HAS_MEMORY" >&2

start_target known_heap
echo "$PID" >"$V2/$NAME/cgroup.procs"
check "the target is in its v2 cgroup" grep -qx "0::/$NAME" "/proc/$PID/cgroup"

# In a private mount namespace: the host's cgroup mounts out, cgroup2 in.
v2_view() {
    unshare -m --propagation private sh -c '
        umount -R /sys/fs/cgroup 2>/dev/null
        mount -t cgroup2 cgroup2 /sys/fs/cgroup || exit 99
        grep -E " - cgroup2? " /proc/self/mountinfo >"$0"
        shift
        exec "$@"' "$WORK/view.mountinfo" -- "$@"
}
OUT=$(v2_view "$MEMPROF" -p "$PID" -e 'memory --json' 2>"$WORK/mp.stderr"); RC=$?
ERR=$(cat "$WORK/mp.stderr")
printf '$ (v2 view) memory --json\n%s\n%s\n(exit %d)\n' "$OUT" "$ERR" "$RC" >&2
check "memprof ran in the v2-only view" mp_ok
check "the view holds one cgroup mount: cgroup2 at /sys/fs/cgroup" \
    [ "$(wc -l <"$WORK/view.mountinfo")" = 1 ] && grep -q ' /sys/fs/cgroup .* - cgroup2 ' "$WORK/view.mountinfo"
if [ "$HAS_MEMORY" = 1 ]; then
    check "v2: the cgroup found under /sys/fs/cgroup, version 2" \
        [ "$(jf '(d["cgroup"]["version"], d["cgroup"]["mount"], d["cgroup"]["path"])')" = "(2, '/sys/fs/cgroup', '/$NAME')" ]
    cur=$(cat "$V2/$NAME/memory.current")
    check "v2: memory.current read (about $cur bytes)" \
        [ "$(jf 'abs(d["cgroup"]["memory_current"] - '"$cur"') < 8 * 1048576')" = True ]
    check "v2: memory.max read" [ "$(jf 'd["cgroup"]["memory_max"]')" = $((256 * 1048576)) ]
else
    check "v2 without the memory controller: said so, naming the directory" \
        [ "$(jf '"no memory controller in /sys/fs/cgroup/'"$NAME"': the cgroup v2 hierarchy mounted on /sys/fs/cgroup has none" in d["cgroup_error"]')" = True ]
    check "v2 without the memory controller: no guess at subtree_control" \
        [ "$(jf '"subtree_control" in d["cgroup_error"]')" = False ]
fi
check "the target lives on, untraced" untouched "$PID"
