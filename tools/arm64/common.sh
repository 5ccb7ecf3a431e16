#!/usr/bin/env bash
# tools/arm64/common.sh - what the arm64 lane's scripts share (source it):
# the work directory outside the repository, the private apt configuration
# that fetches arm64 packages without touching the host's, and the host
# tools the lane installs like tools/deps.sh does.
#
#   ARM64_DIR    the work directory (${MEMPROF_ARM64_DIR:-/var/tmp/memprof-arm64})
#   SYSROOT      $ARM64_DIR/sysroot: the cross sysroot and the guest's root
#   ARM64_APT    apt-get/apt-cache prefix using the private configuration
#   host_need PKG...   installs the host's missing Debian packages
set -eu
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
ARM64_DIR=${MEMPROF_ARM64_DIR:-/var/tmp/memprof-arm64}
SYSROOT=$ARM64_DIR/sysroot
APT_DIR=$ARM64_DIR/apt
TRIPLE=aarch64-linux-gnu
export APT_CONFIG=$APT_DIR/apt.conf
log() { printf '[arm64 %s] %s\n' "$(date +%T)" "$*" >&2; }
die() { printf 'arm64 lane: %s\n' "$*" >&2; exit 1; }

host_need() {
    local missing=() p
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    log "installing on the host: ${missing[*]}"
    local sudo=; [ "$(id -u)" -ne 0 ] && sudo=sudo
    env -u APT_CONFIG $sudo apt-get update -qq
    env -u APT_CONFIG DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# host_mirror, private_apt_dirs, private_apt_conf
. "$REPO/tools/private_apt.sh"

# apt, private to $APT_DIR: arm64 only, its own lists, cache and an empty
# dpkg status (so every dependency is fetched), Debian 12 with its sources
# (apt-get source jemalloc).
setup_apt() {
    [ -f "$APT_CONFIG" ] && return 0
    private_apt_dirs "$APT_DIR"
    local deb sec
    deb=$(host_mirror debian); sec=$(host_mirror debian-security)
    cat >"$APT_DIR/etc/sources.list.d/bookworm.sources" <<SRC
Types: deb deb-src
URIs: $deb
Suites: bookworm bookworm-updates
Components: main
Architectures: arm64
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb deb-src
URIs: $sec
Suites: bookworm-security
Components: main
Architectures: arm64
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
    private_apt_conf "$APT_DIR" arm64
}
