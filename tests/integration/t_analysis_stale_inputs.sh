#!/usr/bin/env bash
# Inputs that would give wrong names without a word are warned about:
#  - `dump FILE` keeps the objects' build-ids in FILE.buildids; an
#    executable replaced by another build after the dump is named, with
#    both build-ids, when the file is read offline, and no frame is named
#    from it;
#  - without FILE.buildids, an object modified after the dump was taken;
#  - a dump whose MAPPED_LIBRARIES section is empty or missing.
# An untouched dump read back gets none of these warnings.
. "$SRCDIR/tests/integration/lib.sh"
cp "$TARGETS/session_idle" "$WORK/prog"
CONF=prof:true,prof_active:false
MALLOC_CONF=$CONF "$WORK/prog" >"$WORK/prog.out" 2>&1 &
PID=$!
PIDS+=("$PID")
wait_until 20 "prog ready" grep -q '^ready' "$WORK/prog.out"
mp -p "$PID" -e 'prof sample 12 --force' -e 'prof on' -e 'sleep 1' -e "dump $WORK/d.heap" -e 'prof off'
assert_ok
kill -9 "$PID"
wait_until 10 "prog gone" bash -c "! kill -0 $PID 2>/dev/null"
check "dump FILE writes FILE.buildids with the executable's build-id" \
    grep -Eq "^[0-9a-f]{40} $WORK/prog\$" "$WORK/d.heap.buildids"
check "the dump itself is what jemalloc wrote (still starts heap_v2)" \
    grep -q '^heap_v2/' "$WORK/d.heap"

mp "$WORK/d.heap" -e 'top 3'
assert_ok
check "untouched: no warning" bash -c "! grep -q warning <<<\"\$1\"" _ "$ERR"
check "untouched: keep_block named" grep -q 'keep_block' <<<"$OUT"

# Another build over the executable (as a redeploy would do).
cp "$TARGETS/light_alloc" "$WORK/prog"
touch -d "@$(( $(stat -c %Y "$WORK/d.heap") + 60 ))" "$WORK/prog"   # surely later
mp "$WORK/d.heap" -e 'top 3'
assert_ok
check "rebuilt executable: warning naming it and both build-ids" \
    grep -Eq "warning: cannot symbolize $WORK/prog: the process had build-id [0-9a-f]+ mapped, but the file there has build-id [0-9a-f]+" <<<"$ERR"
check "rebuilt executable: its frames are file offsets, not the other build's names" \
    holds eval 'assert_out "prog\+0x[0-9a-f]+" && assert_no_out "  ($(nm "$TARGETS/light_alloc" | awk "\$2 ~ /^[tT]\$/ {print \$3}" | paste -sd "|"))\$"'
mp "$WORK/d.heap" -e "pprof $WORK/d.pb.gz"
check "the pprof export warns too" grep -q "warning: cannot symbolize $WORK/prog: the process had build-id" <<<"$ERR"

# Without the build-id file: the mtime tells.
rm "$WORK/d.heap.buildids"
mp "$WORK/d.heap" -e 'top 3'
check "no build-ids: warning that the executable is newer than the dump" \
    grep -Eq "warning: $WORK/prog was modified at .*, after d\.heap was taken" <<<"$ERR"

# Maps section empty, then missing.
sed '/^MAPPED_LIBRARIES:/q' "$WORK/d.heap" >"$WORK/empty_maps.heap"
mp "$WORK/empty_maps.heap" -e 'top 3'
assert_ok
check "empty MAPPED_LIBRARIES: warning" \
    grep -q 'warning: empty_maps.heap has no memory map (its MAPPED_LIBRARIES section is missing or empty)' <<<"$ERR"
sed '/^MAPPED_LIBRARIES:/,$d' "$WORK/d.heap" >"$WORK/no_maps.heap"
mp "$WORK/no_maps.heap" -e 'traces 1'
check "missing MAPPED_LIBRARIES: warning" \
    grep -q 'warning: no_maps.heap has no memory map' <<<"$ERR"
echo "stale inputs ok"
