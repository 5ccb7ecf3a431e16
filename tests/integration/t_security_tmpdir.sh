# Issue 13.4: a TMPDIR the target cannot use does not end the session.  A
# target running as nobody with a TMPDIR that is missing, unsearchable or
# unwritable for it: dumps work (through its memfd); with the private
# directory forced (MEMPROF_TEST_NO_MEMFD=1) memprof finds a directory the
# target can write, names it and why, and removes it; --dump-dir DIR (as
# the target sees it) is used when given, refused with a reason when the
# target cannot write there or when it is reached through a symbolic link.
. "$SRCDIR/tests/integration/lib.sh"

base=$(mktemp -d /var/tmp/memprof-tmpdir.XXXXXX)
trap 'rc=$?; rm -rf "$base"; (exit $rc); cleanup' EXIT
chmod 755 "$base"
cp "$TARGETS/plain" "$base/"
mkdir "$base/unsearchable" "$base/unwritable" "$base/dumps"
chmod 700 "$base/unsearchable"
chmod 755 "$base/unwritable"
chown nobody:nogroup "$base/dumps"
ln -s "$base/dumps" "$base/link"

# start_nobody TMPDIR: the target as nobody with that TMPDIR; sets PID.
start_nobody() {
    local out="$WORK/nobody.$RANDOM.out"
    MALLOC_CONF=prof:true,prof_active:false TMPDIR=$1 \
        setpriv --reuid=nobody --regid=nogroup --clear-groups "$base/plain" >"$out" 2>&1 &
    PID=$!
    PIDS+=("$PID")
    wait_until 20 "the target (as nobody, TMPDIR=$1)" grep -qs '^ready' "$out"
}
# The private directory a forced session's note names, as the target sees it.
noted_dir() { sed -n 's/.*dumped through the private directory \([^ ]*\),.*/\1/p' <<<"$ERR" | head -1; }

for kind in missing unsearchable unwritable; do
    start_nobody "$base/$kind"
    mp -p "$PID" -e 'prof on' -e dump -e 'prof off'
    check "$kind TMPDIR: the dump works" [ "$RC" -eq 0 ]
    check "$kind TMPDIR: a profile came back" grep -Eq '^dump1: [0-9]+ stacks' <<<"$OUT"

    MEMPROF_TEST_NO_MEMFD=1 mp -p "$PID" -e dump
    check "$kind TMPDIR, forced directory: the dump works" [ "$RC" -eq 0 ]
    dir=$(noted_dir)
    check "$kind TMPDIR, forced directory: a directory in /tmp is named" \
        grep -q '^/tmp/memprof-[0-9]*-[0-9a-f]*$' <<<"$dir"
    check "$kind TMPDIR, forced directory: it is gone after the session" \
        bash -c '[ -n "$1" ] && [ ! -e "/proc/$2/root$1" ]' _ "$dir" "$PID"
    assert_untouched "$PID"
done

# --dump-dir: used as given; a directory the target cannot write, a
# symbolic link on the way, and a relative path are refused with reasons.
MEMPROF_TEST_NO_MEMFD=1 mp --dump-dir "$base/dumps" -p "$PID" -e dump -e dump
check "--dump-dir: the dumps work" [ "$RC" -eq 0 ]
check "--dump-dir: its directory is used" grep -q "^$base/dumps/memprof-" <<<"$(noted_dir)"
check "--dump-dir: nothing left in it" [ -z "$(ls -A "$base/dumps")" ]
MEMPROF_TEST_NO_MEMFD=1 mp --dump-dir "$base/unwritable" -p "$PID" -e dump
check "--dump-dir unwritable: refused" [ "$RC" -ne 0 ]
check "--dump-dir unwritable: says why and what to do" \
    grep -q "$base/unwritable: process $PID (uid $(id -u nobody)) cannot write and search it).*--dump-dir" <<<"$ERR"
MEMPROF_TEST_NO_MEMFD=1 mp --dump-dir "$base/link" -p "$PID" -e dump
check "--dump-dir through a symbolic link: refused" [ "$RC" -ne 0 ]
check "--dump-dir through a symbolic link: says so" grep -q 'follows no symbolic link' <<<"$ERR"
mp --dump-dir relative/dir -p "$PID" -e dump
check "--dump-dir relative: refused" grep -q 'give an absolute path' <<<"$ERR"
# Without the hook, --dump-dir is only the fallback: the memfd still wins.
mp --dump-dir "$base/unwritable" -p "$PID" -e dump
check "--dump-dir is not needed when the memfd works" [ "$RC" -eq 0 ]
assert_untouched "$PID"
assert_no_dump_dirs
echo "tmpdir ok"
