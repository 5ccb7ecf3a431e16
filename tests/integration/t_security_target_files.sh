# Issue 13.1's audit: files memprof opens from the target's world (here a
# debug file beside a stripped executable, found through its
# .gnu_debuglink) are opened without side effects.  The target's user put
# a FIFO where the debug file would be: memprof must neither block on it
# (an open(O_RDONLY) of a FIFO waits for a writer forever) nor open it;
# it symbolizes without the debug file and ends.
. "$SRCDIR/tests/integration/lib.sh"

bindir=$(mktemp -d /var/tmp/memprof-files.XXXXXX)
trap 'rc=$?; rm -rf "$bindir"; (exit $rc); cleanup' EXIT
cp "$TARGETS/plain" "$bindir/plain"
objcopy --only-keep-debug "$bindir/plain" "$bindir/plain.debug"
strip --strip-all "$bindir/plain"
objcopy --add-gnu-debuglink="$bindir/plain.debug" "$bindir/plain"
rm "$bindir/plain.debug"
mkfifo "$bindir/plain.debug"

# Every allocation sampled: the dump surely has frames in the executable,
# whose symbols memprof then looks for in the debug file.
MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:0 "$bindir/plain" \
    >"$WORK/plain.out" 2>"$WORK/plain.err" &
PID=$!
PIDS+=("$PID")
wait_until 20 "the stripped target" grep -qs '^ready' "$WORK/plain.out"

"$MEMPROF" -p "$PID" -e dump -e 'top 5' >"$WORK/top.out" 2>"$WORK/top.err" &
MP=$!
PIDS+=("$MP")
wait_until 60 "memprof to end (it must not wait on the FIFO beside the executable)" \
    eval '! kill -0 "$MP" 2>/dev/null'
wait "$MP"
check "memprof succeeded" [ $? -eq 0 ]
check "a symbolized profile came out" grep -q '^Total: ' "$WORK/top.out"
check "the frames of the executable are named by offset, without the FIFO" \
    grep -q 'plain+0x' "$WORK/top.out"
assert_untouched "$PID"
echo "target files ok"
