# A dump read where its objects are not at the paths it names: the moved
# executable is reported once and its frames keep an object+offset name;
# --exe and --sysroot point memprof at the copies, and the names come back.
. "$SRCDIR/tests/integration/lib.sh"
mkdir -p "$WORK/bin" "$WORK/root$WORK/bin"
cp "$TARGETS/alloc_sites" "$WORK/bin/"
MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:10 "$WORK/bin/alloc_sites" "$WORK" >/dev/null \
    || die "alloc_sites failed"
mv "$WORK/bin/alloc_sites" "$WORK/root$WORK/bin/"

mp "$WORK/b.heap" -e 'top 3'
assert_ok
assert_out 'alloc_sites\+0x[0-9a-f]+$'
assert_no_out 'leak_big'
[ "$(grep -c "cannot symbolize $WORK/bin/alloc_sites" <<<"$ERR")" -eq 1 ] \
    || die "the missing executable should be reported exactly once"

mp --exe "$WORK/root$WORK/bin/alloc_sites" "$WORK/b.heap" -e 'top 3'
assert_ok
assert_out ' leak_big$'
assert_out ' leak_small$'

mp --sysroot "$WORK/root" "$WORK/b.heap" -e 'top 3'
assert_ok
assert_out ' leak_big$'
# libjemalloc is not under the sysroot: its frames are still known to be
# the allocator's (by the object's name) and never shown as consumers
assert_no_out 'libjemalloc'
assert_err 'cannot symbolize /usr/lib/x86_64-linux-gnu/libjemalloc.so.2'
echo "relocated ok"
