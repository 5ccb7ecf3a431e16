#!/usr/bin/env bash
# tools/jemalloc52.sh - owns the copy of jemalloc 5.2.1 the tests run
# (tests/integration/t_jemalloc52.sh): Debian 11 (bullseye)'s libjemalloc2,
# the jemalloc Debian 11 and Ubuntu 20.04/22.04 ship, and its
# libjemalloc-dev (libjemalloc_pic.a, for a copy linked into a program, as
# vendored copies are), fetched once with an
# apt private to its work directory (tools/private_apt.sh, as the arm64
# lane's: the host's sources, lists and packages are never touched) and
# unpacked there.
# Later runs find it and need no network.
#
#   tools/jemalloc52.sh        prints the directory holding libjemalloc.so.2
#                              and libjemalloc_pic.a
#
# Work directory: ${MEMPROF_JEMALLOC52_DIR:-/var/tmp/memprof-jemalloc52}.
# Any failure exits non-zero saying what failed: a test that needs this
# library fails with that message, it is never skipped.
set -eu
DIR=${MEMPROF_JEMALLOC52_DIR:-/var/tmp/memprof-jemalloc52}
PKGS="libjemalloc2 libjemalloc-dev"
ARCH=$(dpkg --print-architecture)
APT_DIR=$DIR/apt
LIB=$DIR/root/usr/lib/$(gcc -print-multiarch 2>/dev/null || echo "$ARCH-linux-gnu")
die() { printf 'tools/jemalloc52.sh: %s\n' "$*" >&2; exit 1; }

if [ -f "$LIB/libjemalloc.so.2" ] && [ -f "$LIB/libjemalloc_pic.a" ] && [ -f "$DIR/version" ]; then
    echo "$LIB"
    exit 0
fi

. "$(dirname "$0")/private_apt.sh"
mkdir -p "$DIR/debs"
private_apt_dirs "$APT_DIR"
cat >"$APT_DIR/etc/sources.list.d/bullseye.sources" <<SRC
Types: deb
URIs: $(host_mirror debian)
Suites: bullseye
Components: main
Architectures: $ARCH
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
private_apt_conf "$APT_DIR" "$ARCH"
# the .deb lands in $DIR/debs as root: no _apt sandbox to refuse it
echo 'APT::Sandbox::User "root";' >>"$APT_DIR/apt.conf"
export APT_CONFIG=$APT_DIR/apt.conf

# deb PKG: the cached .deb of PKG 5.2.1, or nothing
deb() { ls "$DIR"/debs/"$1"_5.2.1-*_"$ARCH".deb 2>/dev/null | head -1; }
updated=
rm -rf "$DIR/root"
for pkg in $PKGS; do
    if [ -z "$(deb "$pkg")" ]; then
        [ -n "$updated" ] || apt-get update -qq >&2 ||
            die "apt-get update failed for bullseye at $(host_mirror debian) (private to $APT_DIR; is the Debian mirror reachable?)"
        updated=1
        ver=$(apt-cache madison "$pkg" 2>/dev/null | awk '$3 ~ /^5\.2\.1-/ {print $3; exit}')
        [ -n "$ver" ] || die "no $pkg 5.2.1 for $ARCH in bullseye's lists from $(host_mirror debian) (apt-get update's warnings above say whether the mirror was reached; a host without network needs $DIR copied from one that fetched it)"
        (cd "$DIR/debs" && apt-get download -qq "$pkg=$ver" >&2) ||
            die "apt-get download $pkg=$ver failed (see: APT_CONFIG=$APT_CONFIG apt-get download $pkg=$ver)"
    fi
    dpkg-deb -x "$(deb "$pkg")" "$DIR/root" || die "dpkg-deb -x $(deb "$pkg") failed"
done
[ -f "$LIB/libjemalloc.so.2" ] && [ -f "$LIB/libjemalloc_pic.a" ] ||
    die "bullseye's $PKGS hold no $LIB/libjemalloc.so.2 and libjemalloc_pic.a"
dpkg-deb -f "$(deb libjemalloc2)" Version >"$DIR/version"
echo "$LIB"
