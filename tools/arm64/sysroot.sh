#!/usr/bin/env bash
# tools/arm64/sysroot.sh - the arm64 lane's root: Debian 12 arm64 packages
# fetched with an apt private to the work directory (the host's packages and
# architectures are never touched) and unpacked with dpkg-deb -x into one
# directory, $SYSROOT, which is both gcc-aarch64-linux-gnu's --sysroot and
# the guest's root file system (no foreign binary runs on the host).  Also
# there: jemalloc 5.3 cross-built from Debian's source with --enable-prof
# (Debian's arm64 libjemalloc2 has no profiling), installed as the
# sysroot's libjemalloc, and the arm64 kernel and busybox for guest.sh.
# Re-runs reuse what is there (delete $ARM64_DIR to start over).
. "$(dirname "$0")/common.sh"

# What memprof builds against and runs with, and what the lane's tests
# use in the guest (tests/integration/lib.sh and run.sh: bash, coreutils,
# grep, sed, awk, find, python3, gzip, nm; ps/pgrep from procps; /bin/sh,
# which tests run as 'sh -c', from dash as on any Debian system).
PACKAGES=(
    libc6 libc6-dev libgcc-s1 libstdc++6
    libunwind-dev libelf-dev libdw-dev libreadline-dev zlib1g-dev libdeflate-dev libjson-c-dev
    libprotobuf-c-dev libdebuginfod-dev libmicrohttpd-dev libyaml-dev libgnutls28-dev
    libcrypt-dev check libiberty-dev
    bash dash coreutils grep sed gawk findutils gzip procps python3 binutils util-linux
)
# Not unpacked into the root: the kernel (its vmlinuz and modules go to
# $ARM64_DIR/kernel) and a static busybox for the initramfs.
KERNEL_PKG=linux-image-arm64
BUSYBOX_PKG=busybox-static

host_need gcc-aarch64-linux-gnu qemu-system-arm dpkg-dev debian-archive-keyring cpio \
    make pkg-config protobuf-c-compiler python3 file

setup_apt
stamp() { [ -f "$ARM64_DIR/stamp.$1" ]; }
done_() { touch "$ARM64_DIR/stamp.$1"; }

if ! stamp lists || [ -n "$(find "$ARM64_DIR/stamp.lists" -mmin +1440 2>/dev/null)" ]; then
    log "apt-get update (arm64, private to $APT_DIR)"
    apt-get update -qq || die "apt-get update failed for the arm64 sources in $APT_DIR/etc (is the Debian mirror reachable?)"
    done_ lists
fi

# Every dependency is fetched (the private dpkg status is empty).
fetch() {    # PACKAGE...: downloads them and their dependencies into the cache
    apt-get install -qq -y --download-only "$@" >/dev/null ||
        die "apt-get could not fetch arm64 packages: $* (see: APT_CONFIG=$APT_CONFIG apt-get install --download-only $*)"
}
debs_of() {  # PACKAGE...: the .deb files their installation consists of
    apt-get install -s -y "$@" 2>/dev/null | awk '$1 == "Inst" {print $2}' | sed 's/:arm64$//' |
        while read -r p; do
            ls "$APT_DIR"/cache/archives/"${p}"_*_arm64.deb "$APT_DIR"/cache/archives/"${p}"_*_all.deb 2>/dev/null | head -1
        done
}

# The root is made again when the list of packages changed (the stamp holds
# it), and jemalloc, installed into it, with it.
if ! stamp root || [ "$(cat "$ARM64_DIR/stamp.root")" != "${PACKAGES[*]}" ]; then
    rm -f "$ARM64_DIR/stamp.jemalloc"
    log "fetching ${#PACKAGES[@]} arm64 packages and their dependencies"
    fetch "${PACKAGES[@]}"
    rm -rf "$SYSROOT"; mkdir -p "$SYSROOT"
    n=0
    for deb in $(debs_of "${PACKAGES[@]}"); do
        dpkg-deb -x "$deb" "$SYSROOT"; n=$((n + 1))
    done
    [ "$n" -gt 50 ] || die "only $n packages unpacked into $SYSROOT: the arm64 apt lists look incomplete"
    log "unpacked $n packages into $SYSROOT"
    # merged /usr as Debian 12 has it (usrmerge): /bin, /sbin, /lib -> usr/
    for d in bin sbin lib; do
        if [ -d "$SYSROOT/$d" ] && [ ! -L "$SYSROOT/$d" ]; then
            mkdir -p "$SYSROOT/usr/$d"; cp -a "$SYSROOT/$d/." "$SYSROOT/usr/$d/"; rm -rf "${SYSROOT:?}/$d"
        fi
        [ -e "$SYSROOT/$d" ] || ln -s "usr/$d" "$SYSROOT/$d"
    done
    # Absolute symlinks (libfoo.so -> /lib/aarch64-linux-gnu/libfoo.so.1)
    # would point into the host: made relative, or the cross linker finds no
    # shared library and silently takes the static archive.
    find "$SYSROOT" -type l -lname '/*' | while read -r l; do
        t=$(readlink "$l")
        ln -sfn "$(realpath -m --relative-to="$(dirname "$l")" "$SYSROOT$t")" "$l"
    done
    echo "${PACKAGES[*]}" >"$ARM64_DIR/stamp.root"
fi
# What the packages' maintainer scripts would have made (none ran): the
# alternatives the tests call by their generic names, the guest's minimal
# /etc and its mount points.  Every run, so a change here reaches an old
# root.
ln -sfn gawk "$SYSROOT/usr/bin/awk"
mkdir -p "$SYSROOT"/{proc,sys,dev,tmp,run,root,mnt/io,var/tmp}
chmod 1777 "$SYSROOT/tmp" "$SYSROOT/var/tmp"
echo 'root:x:0:0:root:/root:/bin/bash' >"$SYSROOT/etc/passwd"
echo 'root:x:0:' >"$SYSROOT/etc/group"
printf '127.0.0.1 localhost\n::1 localhost\n' >"$SYSROOT/etc/hosts"

# jemalloc with profiling: Debian's source, cross-built, installed over the
# sysroot's (none is there: the Debian arm64 package is not fetched) in
# /usr/lib/aarch64-linux-gnu with its pkg-config file, headers and jeprof
# (the shared library only: the static archives would double the build).
if ! stamp jemalloc; then
    src=$ARM64_DIR/src
    rm -rf "$src"; mkdir -p "$src"
    log "apt-get source jemalloc (Debian 12)"
    (cd "$src" && apt-get source -qq jemalloc >/dev/null 2>&1) ||
        die "apt-get source jemalloc failed (deb-src of $APT_DIR/etc/sources.list.d; dpkg-dev installed?)"
    jdir=$(find "$src" -maxdepth 1 -type d -name 'jemalloc-*' | head -1)
    [ -n "$jdir" ] || die "no jemalloc source directory in $src"
    log "cross-building $(basename "$jdir") with --enable-prof"
    # Debian's arm64 options (debian/rules: pages up to 64 KiB, 2 MiB huge
    # pages, not the build machine's), plus --enable-prof; no C++ part.
    (cd "$jdir" && ./configure --host=$TRIPLE --build="$(gcc -dumpmachine)" \
        CC="$TRIPLE-gcc --sysroot=$SYSROOT" --prefix=/usr --libdir=/usr/lib/$TRIPLE \
        --with-lg-page=16 --with-lg-hugepage=21 --enable-prof \
        --disable-cxx >"$src/configure.log" 2>&1 &&
     make -j"$(nproc)" build_lib_shared >"$src/make.log" 2>&1 &&
     make install_lib_shared install_lib_pc install_bin install_include DESTDIR="$SYSROOT" >"$src/install.log" 2>&1) ||
        die "jemalloc cross-build failed: see $src/configure.log, make.log, install.log"
    # pkg-config's prefix is what a --sysroot build resolves under $SYSROOT
    grep -q enable-prof "$SYSROOT/usr/lib/$TRIPLE/pkgconfig/jemalloc.pc" ||
        sed -i 's/^Description: .*/& (--enable-prof, memprof arm64 lane)/' "$SYSROOT/usr/lib/$TRIPLE/pkgconfig/jemalloc.pc"
    done_ jemalloc
fi

# The kernel (vmlinuz booted directly; modules for the initramfs) and a
# static busybox (the initramfs's shell, insmod, mount).
if ! stamp kernel; then
    log "fetching $KERNEL_PKG and $BUSYBOX_PKG"
    fetch "$KERNEL_PKG" "$BUSYBOX_PKG"
    rm -rf "$ARM64_DIR/kernel"; mkdir -p "$ARM64_DIR/kernel"
    for deb in $(debs_of "$KERNEL_PKG" "$BUSYBOX_PKG" | grep -E '/(linux-image-[0-9]|busybox-static)'); do
        dpkg-deb -x "$deb" "$ARM64_DIR/kernel"
    done
    ls "$ARM64_DIR"/kernel/boot/vmlinuz-* >/dev/null 2>&1 || die "no vmlinuz in $KERNEL_PKG's packages"
    done_ kernel
fi
log "sysroot ready: $SYSROOT ($(du -sh "$SYSROOT" | cut -f1)); kernel: $(basename "$(ls "$ARM64_DIR"/kernel/boot/vmlinuz-*)")"
