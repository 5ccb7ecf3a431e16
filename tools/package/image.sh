#!/usr/bin/env bash
# tools/package/image.sh - memprof serve's container image from the Debian
# package: dist/Containerfile on a Debian 12 base that is the package
# test's debootstrap root (tools/package/root.sh) imported into podman as
# localhost/memprof-package/bookworm (again only when the root changed),
# never pulled: no registry is needed.  Run as root (podman's storage).
#
#   image.sh DEB [TAG]    builds TAG (default localhost/memprof:VERSION)
#                         from DEB, prints TAG
set -eu
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
DIR=${MEMPROF_PACKAGE_ROOT:-/var/tmp/memprof-package-root}
BASE=localhost/memprof-package/bookworm
die() { printf 'image: %s\n' "$*" >&2; exit 1; }

deb=${1:?usage: image.sh DEB [TAG]}
[ -f "$deb" ] || die "no package at $deb: make deb builds it"
version=$(dpkg-deb -f "$deb" Version)
tag=${2:-localhost/memprof:$version}
command -v podman >/dev/null || die "podman is missing: bash tools/deps.sh installs it"

root=$(bash "$REPO/tools/package/root.sh") || die "tools/package/root.sh failed"
stamp="$(cat "$DIR/stamp")"
id=$(podman image inspect --format '{{.Id}}' "$BASE" 2>/dev/null || true)
if [ -z "$id" ] || [ "$id $stamp" != "$(cat "$DIR/image" 2>/dev/null)" ]; then
    podman image rm -f "$BASE" >/dev/null 2>&1 || true
    tar -C "$root" -c . | podman import -q - "$BASE" >/dev/null || die "podman import of $root failed"
    echo "$(podman image inspect --format '{{.Id}}' "$BASE") $stamp" >"$DIR/image"
fi

ctx=$(mktemp -d "${TMPDIR:-/tmp}/memprof-image.XXXXXX")
trap 'rm -rf "$ctx"' EXIT
cp "$deb" "$REPO/dist/Containerfile" "$ctx/"
# The commit the package was built from, as its memprof says it.
dpkg-deb -x "$deb" "$ctx/pkg"
revision=$("$ctx/pkg/usr/bin/memprof" --version 2>/dev/null | sed -n 's/.*(revision \(.*\))$/\1/p')
rm -rf "$ctx/pkg"
# runc, the network for apt and explicit ulimits: what this host's podman
# needs (crun and podman's default ulimits are refused here).
podman build -q --runtime runc --network host --ulimit nofile=16384:16384 --ulimit nproc=4096:4096 \
    --build-arg BASE="$BASE" --build-arg VERSION="$version" --build-arg REVISION="${revision:-unknown}" \
    -f "$ctx/Containerfile" -t "$tag" "$ctx" >"$ctx/build.log" 2>&1 ||
    die "podman build failed: $(tail -5 "$ctx/build.log")"
echo "$tag"
