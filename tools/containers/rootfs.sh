#!/usr/bin/env bash
# tools/containers/rootfs.sh - the root file systems of the real-container
# tests (tests/integration/containers.sh): Debian bookworm and bullseye,
# each made by debootstrap (--variant=minbase) from the host's Debian
# mirror with the servers the tests run inside, and imported as the podman
# images memprof-test/bookworm and memprof-test/bullseye.  Never pulled:
# no registry is needed.  Run as root.
#
# Cached like the arm64 lane's root (tools/arm64/): in
# ${MEMPROF_CONTAINERS_DIR:-/var/tmp/memprof-containers}/SUITE/, made again
# only when the suite's package list (its stamp) changed; an image missing
# from podman's storage, or not the one made from the current root, is
# imported again.  The downloaded packages stay in debs/ for a rebuild.
# Delete the directory to start over.
#
#   rootfs.sh            both suites (prints "ready" lines, the time taken)
#   rootfs.sh SUITE...   only these
set -eu
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
. "$REPO/tools/arm64/common.sh"    # host_need, host_mirror
DIR=${MEMPROF_CONTAINERS_DIR:-/var/tmp/memprof-containers}
log() { printf '[containers %s] %s\n' "$(date +%T)" "$*" >&2; }
die() { printf 'containers: %s\n' "$*" >&2; exit 1; }

# What runs inside.  Both: redis-server (jemalloc through Debian's
# libjemalloc2, built with profiling on amd64), nginx-light (glibc
# malloc), procps (ps, pgrep: for looking around inside).  bookworm also
# carries the libraries memprof and memprof-serve link (ldd of the build:
# Debian 12's, and the sanitizers' runtimes of make SANITIZE=1), so the
# build itself runs in that image (serve --pid=host).
COMMON=(redis-server nginx-light libjemalloc2 procps)
packages_of() {
    case "$1" in
    bookworm) echo "${COMMON[*]}" libdw1 libelf1 libjson-c5 libdeflate0 libmicrohttpd12 \
        libgnutls30 libyaml-0-2 libprotobuf-c1 libreadline8 libunwind8 libcrypt1 zlib1g \
        libdebuginfod1 curl libasan8 libubsan1 ;;
    bullseye) echo "${COMMON[*]}" ;;
    *) die "unknown suite $1 (bookworm or bullseye)" ;;
    esac
}

[ "$(id -u)" -eq 0 ] || die "run as root (debootstrap and podman's storage in /var/lib/containers)"
host_need debootstrap podman runc debian-archive-keyring

# build SUITE: the root in $DIR/SUITE/rootfs, made when its stamp (the
# package list) differs; then the image, imported when podman lacks it or
# holds another.
build() {
    local suite=$1 pkgs root stamp image id old
    pkgs=$(packages_of "$suite")
    root=$DIR/$suite/rootfs
    stamp=$DIR/$suite/stamp
    image=memprof-test/$suite
    old=$(cat "$DIR/$suite/image" 2>/dev/null || true)    # what this script imported last
    if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$pkgs" ]; then
        log "debootstrap $suite (minbase + ${pkgs// /,}) from $(host_mirror debian)"
        rm -f "$stamp" "$DIR/$suite/image"
        rm -rf "$root"
        mkdir -p "$root" "$DIR/debs"
        debootstrap --variant=minbase --include="${pkgs// /,}" --cache-dir="$DIR/debs" \
            "$suite" "$root" "$(host_mirror debian)" >"$DIR/$suite/debootstrap.log" 2>&1 ||
            die "debootstrap $suite failed: $(tail -3 "$DIR/$suite/debootstrap.log") (whole log: $DIR/$suite/debootstrap.log)"
        # What a container needs of the root and tests look for: no
        # package lists or caches (smaller image), a policy that keeps
        # services from starting if anything installs later.
        rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/var/cache/apt/archives/*.deb
        printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
        chmod 755 "$root/usr/sbin/policy-rc.d"
        echo "$pkgs" >"$stamp"
    fi
    id=$(podman image inspect --format '{{.Id}}' "$image" 2>/dev/null || true)
    if [ -z "$id" ] || [ "$id" != "$(cat "$DIR/$suite/image" 2>/dev/null)" ]; then
        log "importing $root as $image"
        # The name moves to the new image.  The one this script imported
        # before is removed unless a running test's container still uses
        # it (no rm -f, which would remove those containers; nothing else
        # in podman's storage is touched: other images may be others').
        tar -C "$root" -c . | podman import -q - "$image" >/dev/null ||
            die "podman import of $root as $image failed"
        [ -z "$old" ] || [ "$old" = "$(podman image inspect --format '{{.Id}}' "$image")" ] ||
            podman image rm "$old" >/dev/null 2>&1 || true
        podman image inspect --format '{{.Id}}' "$image" >"$DIR/$suite/image"
    fi
    log "ready: $image ($(du -sh "$root" | cut -f1) in $root)"
}

t0=$SECONDS
[ $# -gt 0 ] || set -- bookworm bullseye
# One run at a time (two test runs starting together share the cache).
mkdir -p "$DIR"
exec 9>"$DIR/lock"
flock 9
for s in "$@"; do build "$s"; done
log "done in $((SECONDS - t0)) s"
