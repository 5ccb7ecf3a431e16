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
check "moved: top runs" mp_ok
check "moved: frames keep an object+offset name" out_has 'alloc_sites\+0x[0-9a-f]+$'
check "moved: no symbol names" out_lacks 'leak_big'
check "moved: the missing executable is reported exactly once" \
    [ "$(grep -c "cannot symbolize $WORK/bin/alloc_sites" <<<"$ERR")" -eq 1 ]

mp --exe "$WORK/root$WORK/bin/alloc_sites" "$WORK/b.heap" -e 'top 3'
check "--exe: top runs" mp_ok
check "--exe: leak_big named" out_has ' leak_big$'
check "--exe: leak_small named" out_has ' leak_small$'

mp --sysroot "$WORK/root" "$WORK/b.heap" -e 'top 3'
check "--sysroot: top runs" mp_ok
check "--sysroot: leak_big named" out_has ' leak_big$'
# libjemalloc is not under the sysroot: its frames are still known to be
# the allocator's (by the object's name) and never shown as consumers
check "--sysroot: allocator frames never shown" out_lacks 'libjemalloc'
check "--sysroot: the missing libjemalloc is reported" \
    err_has 'cannot symbolize /usr/lib/x86_64-linux-gnu/libjemalloc.so.2'
