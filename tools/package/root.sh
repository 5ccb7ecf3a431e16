#!/usr/bin/env bash
# tools/package/root.sh - the clean Debian 12 the package test installs
# memprof's .deb into (tests/integration/t_package_deb.sh): a debootstrap
# --variant=minbase bookworm root from the host's Debian mirror, with its
# package lists fetched, and nothing else.  Cached in
# ${MEMPROF_PACKAGE_ROOT:-/var/tmp/memprof-package-root}/rootfs, made again
# only when its stamp is missing; the test never writes into it (it runs
# on an overlay of it).  Delete the directory to start over.  Run as root.
set -eu
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
. "$REPO/tools/arm64/common.sh"    # host_need, host_mirror
unset APT_CONFIG                    # common.sh points it at the arm64 lane's apt
DIR=${MEMPROF_PACKAGE_ROOT:-/var/tmp/memprof-package-root}
ROOT=$DIR/rootfs
STAMP="bookworm minbase $(host_mirror debian)"
die() { printf 'package root: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "run as root (debootstrap, chroot)"
if [ -f "$DIR/stamp" ] && [ "$(cat "$DIR/stamp")" = "$STAMP" ]; then
    echo "$ROOT"
    exit 0
fi
host_need debootstrap debian-archive-keyring
rm -rf "$ROOT" "$DIR/stamp"
mkdir -p "$ROOT" "$DIR/debs"
debootstrap --variant=minbase --cache-dir="$DIR/debs" bookworm "$ROOT" "$(host_mirror debian)" \
    >"$DIR/debootstrap.log" 2>&1 ||
    die "debootstrap bookworm failed: $(tail -3 "$DIR/debootstrap.log") (whole log: $DIR/debootstrap.log)"
# The security suite as the host has it, and the lists fetched once here
# (apt install of the .deb then only downloads its dependencies).
echo "deb $(host_mirror debian-security) bookworm-security main" >"$ROOT/etc/apt/sources.list.d/security.list"
cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
unshare --mount --propagation private sh -c \
    "mount -t proc proc '$ROOT/proc' && chroot '$ROOT' apt-get update -qq" >"$DIR/update.log" 2>&1 ||
    die "apt-get update in $ROOT failed: $(tail -3 "$DIR/update.log")"
rm -f "$ROOT"/var/cache/apt/archives/*.deb
echo "$STAMP" >"$DIR/stamp"
echo "$ROOT"
