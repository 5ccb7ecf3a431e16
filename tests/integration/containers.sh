# containers.sh - real containers for the integration tests (source it
# after lib.sh): podman (Debian 12's, rootful) running the images that
# tools/containers/rootfs.sh makes from debootstrap roots (bookworm and
# bullseye), never pulled.  The images are made on first use when missing
# (tools/test.sh makes them before the suite).
#
#   container_start SUITE [PODMAN-RUN-OPTIONS...] -- CMD...
#        starts CMD in a new container of memprof-test/SUITE, detached:
#        runc (crun, which podman prefers when it is installed, refuses
#        these machines' hybrid cgroups), explicit ulimits (with podman's
#        own, runc fails: "error setting rlimit type 7"), no network
#        unless the options give one (--network host), podman's default
#        seccomp profile and capabilities, never a pull (the image is
#        local or the start fails); FILES="HOSTPATH:PATH ..." are
#        copied into the container (its own layer) before it starts.
#        Sets CNAME (removed, with everything in it, when the test ends)
#        and CPID (the host PID of the container's main process; PID
#        too, for lib.sh's open_session); returns
#        once that process runs.  Readiness of what it runs is the test's
#        to wait for.
#   cexec CMD...        runs CMD in the container $CNAME (podman exec)
#   in_container PATH   PATH inside $CNAME as the host reaches it
#                       (/proc/$CPID/root/PATH)
#   ns_pid PID          the PID a process has in its own PID namespace
#                       (the last NSpid of /proc/PID/status)
#   redis_ping          redis in $CNAME, listening on /tmp/redis.sock,
#                       answers PING (host redis-cli through /proc/PID/root)
CONTAINERS=()
CONTAINER_RUN=(--pull never --runtime runc --ulimit nofile=16384:16384 --ulimit nproc=4096:4096)
bash "$SRCDIR/tools/containers/rootfs.sh" >"$WORK/rootfs.log" 2>&1 ||
    die "the container images could not be made: $(tail -3 "$WORK/rootfs.log")"

container_start() {
    local suite=$1 opts=() f
    shift
    while [ $# -gt 0 ] && [ "$1" != -- ]; do opts+=("$1"); shift; done
    [ "${1:-}" = -- ] || die "container_start: no -- before the command"
    shift
    case " ${opts[*]} " in *" --network "*|*" --network="*) ;; *) opts+=(--network none) ;; esac
    CNAME=memprof-$(basename "$0" .sh)-$$-${#CONTAINERS[@]}
    CONTAINERS+=("$CNAME")
    [ ${#CONTAINERS[@]} -gt 1 ] || CLEANUP_HOOKS+=(remove_containers)
    podman create --name "$CNAME" "${CONTAINER_RUN[@]}" "${opts[@]}" "memprof-test/$suite" "$@" \
        >"$WORK/$CNAME.create" 2>&1 || die "podman create $CNAME failed: $(cat "$WORK/$CNAME.create")"
    for f in ${FILES:-}; do
        podman cp "${f%%:*}" "$CNAME:${f#*:}" 2>"$WORK/$CNAME.cp" ||
            die "podman cp $f failed: $(cat "$WORK/$CNAME.cp")"
    done
    podman start "$CNAME" >"$WORK/$CNAME.start" 2>&1 ||
        die "podman start $CNAME failed: $(cat "$WORK/$CNAME.start")"
    CPID=$(podman inspect --format '{{.State.Pid}}' "$CNAME")
    [ "${CPID:-0}" -gt 0 ] && alive "$CPID" ||
        die "container $CNAME has no running process: $(podman logs "$CNAME" 2>&1 | tail -3)"
    PID=$CPID    # for lib.sh's helpers (open_session)
}
remove_containers() {
    local c
    for c in "${CONTAINERS[@]}"; do podman rm -f -t 0 "$c" >/dev/null 2>&1; done
}
cexec() { podman exec "$CNAME" "$@"; }
in_container() { echo "/proc/$CPID/root$1"; }
ns_pid() { awk '/^NSpid:/ {print $NF}' "/proc/$1/status"; }

# redis in the container, its socket reached from the host through the
# container's root; dies at once if the container's process ended.
REDIS_IN_CONTAINER=(redis-server --save '' --appendonly no --port 0 --unixsocket /tmp/redis.sock)
redis_ping() {
    redis-cli -s "$(in_container /tmp/redis.sock)" ping 2>/dev/null | grep -q PONG && return 0
    alive "$CPID" || die "redis in $CNAME exited: $(podman logs "$CNAME" 2>&1 | tail -3)"
    return 1
}
redis_cmd() { redis-cli -s "$(in_container /tmp/redis.sock)" "$@"; }

# session_open NAME: lib.sh's open_session on $PID, remembered as the
# session session_send talks to; session_send CMD RE: a command to it,
# then wait for its answer (RE in $WORK/NAME.out, which session_out prints).
session_open() { SESSION=$1; open_session "$1"; }
session_send() {
    echo "$1" >&3
    wait_until 20 "the session to answer '$1'" grep -Eq -- "$2" "$WORK/$SESSION.out"
}
session_out() { cat "$WORK/$SESSION.out"; }
# A jemalloc top --json in $OUT: the in-use bytes of FUNCTION's own row.
flat_bytes_of() { jf "sum(r['flat_bytes'] for r in d['rows'] if r['function'] == '$1')"; }
# redis_fill N: N keys of 100 bytes set in the container's redis (one Lua
# script: redis 7 refuses DEBUG POPULATE unless configured to allow it).
redis_fill() {
    redis_cmd eval "for i = 1, $1 do redis.call('set', 'k' .. i, string.rep('x', 100)) end" 0 >/dev/null
}
