#!/usr/bin/env bash
# tools/arm64/build.sh - cross-builds memprof and the test targets the lane
# runs for arm64, against the sysroot of sysroot.sh, in a copy of the source
# tree ($ARM64_DIR/build, at the same path in the guest), so the host's own build
# is untouched.  The tree copied is this repository's working tree, or
# MEMPROF_ARM64_SRC's.  With -k, compiles all it can and lists what failed
# (progress while a part is missing) instead of stopping at the first error.
. "$(dirname "$0")/common.sh"
keep_going=
[ "${1:-}" = -k ] && keep_going=-k
src=${MEMPROF_ARM64_SRC:-$REPO}
build=$ARM64_DIR/build
[ -f "$ARM64_DIR/stamp.jemalloc" ] || die "no arm64 sysroot in $ARM64_DIR: run tools/arm64/sysroot.sh first"

# The test targets the lane's tests start (lane.sh's TESTS), and stops.sh's.
TARGETS_NEEDED=(sleepers signals glibc_live alloc_sites heartbeat known_heap leak_recent
    slow_leak glibc_fragmented)

# Copy the working tree (tracked and new files, not ignored ones); a file
# is written only when its content differs, and then gets a new time, so
# make rebuilds exactly what changed, whichever tree was copied before.
# Another tree's objects are not reused (a stale object of a file this
# tree lacks would satisfy make), nor those of a work directory since
# moved (its paths are in the Makefile and the debug information).
[ "$(cat "$ARM64_DIR/build.src" 2>/dev/null)" = "$src -> $build" ] || rm -rf "$build"
echo "$src -> $build" >"$ARM64_DIR/build.src"
mkdir -p "$build"
stage=$ARM64_DIR/stage
rm -rf "$stage"; mkdir -p "$stage"
(cd "$src" && git ls-files -z -co --exclude-standard | while IFS= read -r -d '' f; do
    [ -e "$f" ] && printf '%s\0' "$f"; done | tar --null -T - -cf -) | tar -C "$stage" -xf - ||
    die "copying the source tree $src failed"
(cd "$stage" && find . -type f -print0) | while IFS= read -r -d '' f; do
    cmp -s "$stage/$f" "$build/$f" && continue
    mkdir -p "$(dirname "$build/$f")"; cp -P "$stage/$f" "$build/$f"
    # a generated file committed beside its source (configure) keeps its
    # order: configure is newer than configure.ac
    case "$f" in */configure) touch "$build/$f" ;; esac
done
# and a file the source no longer has goes (what make and configure wrote
# stays: build/, Makefile, config.*, the logs)
(cd "$build" && find . -path ./build -prune -o -type f \
    ! -name Makefile ! -name 'config.*' ! -name '*.log' -print0) | while IFS= read -r -d '' f; do
    [ -e "$stage/$f" ] || rm -f "$build/$f"
done
rm -rf "$stage"

cc="$TRIPLE-gcc --sysroot=$SYSROOT"
export PKG_CONFIG=pkg-config PKG_CONFIG_SYSROOT_DIR=$SYSROOT
export PKG_CONFIG_LIBDIR=$SYSROOT/usr/lib/$TRIPLE/pkgconfig:$SYSROOT/usr/lib/pkgconfig:$SYSROOT/usr/share/pkgconfig
cd "$build"
if [ ! -f Makefile ] || [ Makefile -ot configure ] || [ Makefile -ot Makefile.in ]; then
    log "configure --host=$TRIPLE (sysroot $SYSROOT)"
    ./configure --host=$TRIPLE CC="$cc" >configure.log 2>&1 ||
        die "cross-configure failed: $(tail -3 configure.log) (whole log: $build/configure.log)"
fi
# Set here whatever configure of this tree says: the CPU memprof is built
# for, the cross binutils that check the sampler image.
make_vars=(ARCH=aarch64 OBJCOPY=$TRIPLE-objcopy OBJDUMP=$TRIPLE-objdump)
log "make memprof and ${#TARGETS_NEEDED[@]} test targets"
start=$(date +%s)
rc=0
make -s $keep_going -j"$(nproc)" "${make_vars[@]}" build/memprof \
    "${TARGETS_NEEDED[@]/#/build/targets/}" >make.log 2>&1 || rc=$?
log "make: $(($(date +%s) - start)) s, status $rc"
if [ $rc -ne 0 ]; then
    grep -E 'error|Error|No rule' make.log | head -20 >&2
    die "cross-build failed (whole log: $build/make.log)"
fi
file build/memprof | grep -q 'ARM aarch64' || die "build/memprof is not an arm64 program: $(file build/memprof)"
