# docker.sh - a private Docker daemon for the integration tests (sourced
# by containers.sh when CONTAINER_ENGINE=docker): Debian 12's dockerd
# (docker.io 20.10, its own containerd and runc), never the host's: its
# own socket, exec root and configuration (/run/memprof-docker-PID), its
# data root (images) and key cached in
# ${MEMPROF_DOCKER_DIR:-/var/tmp/memprof-docker},
# no iptables rules, no bridge, no userland proxy (containers get
# --network none or host), the default cgroupfs driver (this host has no
# systemd to ask for scopes).  One test at a time holds the data root (a
# lock: two daemons must not share one).  Stopped, with every
# container it ran, when the test ends.  What it leaves elsewhere:
# containerd's shim sockets under /run/containerd/s while containers run
# (removed with them), empty /run/docker/plugins and /run/containerd/s.
#
#   docker_daemon_start   starts it (sets DOCKER_SOCK), imports the
#                         images memprof-test/bookworm and /bullseye from
#                         tools/containers/rootfs.sh's roots when missing
#                         or made from an older root
DOCKER_DIR=${MEMPROF_DOCKER_DIR:-/var/tmp/memprof-docker}
DOCKERD=/usr/sbin/dockerd

docker_daemon_start() {
    local exec_root=/run/memprof-docker-$$ suite
    [ -x "$DOCKERD" ] && [ -x /usr/bin/docker ] ||
        die "Debian's docker.io is not installed (bash tools/deps.sh installs it)"
    mkdir -p "$DOCKER_DIR/data" || die "cannot make $DOCKER_DIR"
    exec 9>"$DOCKER_DIR/lock"
    flock -w 600 9 || die "$DOCKER_DIR is held by another test's dockerd for 10 minutes"
    mkdir -p "$exec_root"
    DOCKER_EXEC_ROOT=$exec_root
    DOCKER_SOCK=$exec_root/docker.sock
    # Nothing of the host's: its own configuration (not
    # /etc/docker/daemon.json), which puts its key beside the data (not
    # /etc/docker/key.json; 20.10 has no option for it).
    printf '{"deprecated-key-path": "%s"}\n' "$DOCKER_DIR/key.json" >"$exec_root/daemon.json"
    "$DOCKERD" --config-file "$exec_root/daemon.json" \
        --data-root "$DOCKER_DIR/data" --exec-root "$exec_root/exec" \
        --pidfile "$exec_root/dockerd.pid" -H "unix://$DOCKER_SOCK" \
        --iptables=false --ip6tables=false --ip-masq=false --bridge=none --userland-proxy=false \
        >"$WORK/dockerd.log" 2>&1 9>&- &
    DOCKERD_PID=$!
    CLEANUP_HOOKS+=(docker_daemon_stop)
    wait_until 60 "dockerd to answer on $DOCKER_SOCK" docker_daemon_up
    for suite in bookworm bullseye; do docker_image "$suite"; done
}
docker_daemon_up() {
    /usr/bin/docker -H "unix://$DOCKER_SOCK" version >/dev/null 2>&1 && return 0
    kill -0 "$DOCKERD_PID" 2>/dev/null || die "dockerd exited: $(tail -5 "$WORK/dockerd.log")"
    return 1
}
# docker_image SUITE: the root's identity (when its stamp was written) is
# the image's label memprof.root; another one means a new root: import.
docker_image() {
    local root=${MEMPROF_CONTAINERS_DIR:-/var/tmp/memprof-containers}/$1 want have
    want=$(stat -c %Y "$root/stamp") || die "no root for $1 in $root"
    have=$(engine image inspect --format '{{index .Config.Labels "memprof.root"}}' "memprof-test/$1" 2>/dev/null)
    [ "$have" = "$want" ] && return 0
    tar -C "$root/rootfs" -c . | engine import --change "LABEL memprof.root=$want" - "memprof-test/$1" \
        >"$WORK/docker-import.log" 2>&1 ||
        die "docker import of $root/rootfs failed: $(tail -3 "$WORK/docker-import.log")"
    engine image prune -f >/dev/null 2>&1    # the previous import, now untagged
}
docker_daemon_stop() {
    local ids
    ids=$(engine ps -aq 2>/dev/null)
    [ -z "$ids" ] || engine rm -f $ids >/dev/null 2>&1
    kill "$DOCKERD_PID" 2>/dev/null
    # Bounded (a minute), then killed: a hook cannot die.
    local i
    for ((i = 0; i < 600; i++)); do kill -0 "$DOCKERD_PID" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$DOCKERD_PID" 2>/dev/null
    wait "$DOCKERD_PID" 2>/dev/null
    # dockerd leaves the host's network namespace bound at
    # EXEC_ROOT/netns/default, even with --bridge=none.
    local m
    for m in $(awk -v r="$DOCKER_EXEC_ROOT/" 'index($5, r) == 1 {print $5}' /proc/self/mountinfo); do
        umount "$m"
    done
    rm -rf "$DOCKER_EXEC_ROOT"
}
