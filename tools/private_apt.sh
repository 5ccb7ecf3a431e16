#!/usr/bin/env bash
# tools/private_apt.sh - an apt of memprof's tools' own (source it): its
# lists, cache and an empty dpkg status under one directory, and the
# host's Debian mirror, so that a tool fetches packages of another
# architecture or release without touching the host's sources, lists or
# packages.  Used by the arm64 lane (tools/arm64/common.sh) and
# tools/jemalloc52.sh.  The host's apt.conf.d is kept (proxies, snapshot
# mirrors); its sources, preferences and status are not used.
#
#   host_mirror debian|debian-security   the host's URI for that archive
#   private_apt_dirs DIR                 DIR's lists, cache, sources.list.d, empty status
#   private_apt_conf DIR ARCH            writes DIR/apt.conf (last: it marks DIR ready)

# The host's Debian mirror (deb822 .sources or one-line sources.list), so
# a tool fetches from where the host does; deb.debian.org otherwise.
host_mirror() {    # debian | debian-security
    local want=$1 uri
    uri=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null |
        grep -oE '(https?|file)://[^ ]+' | sed 's:/*$::' | grep -E "/$want\$" | head -1) || true
    echo "${uri:-http://deb.debian.org/$want}"
}

private_apt_dirs() {
    mkdir -p "$1"/{lists/partial,cache/archives/partial,etc/sources.list.d,etc/preferences.d}
    : >"$1/status"
}

private_apt_conf() {
    local dir=$1 arch=$2
    cat >"$dir/apt.conf.tmp" <<CONF
APT::Architecture "$arch";
APT::Architectures { "$arch"; };
APT::Install-Recommends "false";
Dir::State "$dir";
Dir::State::lists "$dir/lists";
Dir::State::status "$dir/status";
Dir::Cache "$dir/cache";
Dir::Cache::archives "$dir/cache/archives";
Dir::Etc::sourcelist "/dev/null";
Dir::Etc::sourceparts "$dir/etc/sources.list.d";
Dir::Etc::preferences "/dev/null";
Dir::Etc::preferencesparts "$dir/etc/preferences.d";
Debug::NoLocking "true";
CONF
    mv "$dir/apt.conf.tmp" "$dir/apt.conf"
}
