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

# The host's Debian mirror (deb822 .sources or one-line sources.list), so
# the lane fetches from where the host does; deb.debian.org otherwise.
host_mirror() {    # debian | debian-security
    local want=$1 uri
    uri=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null |
        grep -oE '(https?|file)://[^ ]+' | sed 's:/*$::' | grep -E "/$want\$" | head -1) || true
    echo "${uri:-http://deb.debian.org/$want}"
}

# apt, private to $APT_DIR: arm64 only, its own lists, cache and an empty
# dpkg status (so every dependency is fetched), Debian 12 with its sources
# (apt-get source jemalloc).  The host's apt.conf.d is kept (proxies,
# snapshot mirrors); its sources, preferences and status are not used.
setup_apt() {
    [ -f "$APT_CONFIG" ] && return 0
    mkdir -p "$APT_DIR"/{lists/partial,cache/archives/partial,etc/sources.list.d,etc/preferences.d}
    : >"$APT_DIR/status"
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
    cat >"$APT_CONFIG.tmp" <<CONF
APT::Architecture "arm64";
APT::Architectures { "arm64"; };
APT::Install-Recommends "false";
Dir::State "$APT_DIR";
Dir::State::lists "$APT_DIR/lists";
Dir::State::status "$APT_DIR/status";
Dir::Cache "$APT_DIR/cache";
Dir::Cache::archives "$APT_DIR/cache/archives";
Dir::Etc::sourcelist "/dev/null";
Dir::Etc::sourceparts "$APT_DIR/etc/sources.list.d";
Dir::Etc::preferences "/dev/null";
Dir::Etc::preferencesparts "$APT_DIR/etc/preferences.d";
Debug::NoLocking "true";
CONF
    mv "$APT_CONFIG.tmp" "$APT_CONFIG"
}
