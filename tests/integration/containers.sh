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
#   engine ARGS...      podman ARGS, or docker ARGS on the test's dockerd
#   in_container PATH   PATH inside $CNAME as the host reaches it
#                       (/proc/$CPID/root/PATH)
#   ns_pid PID          the PID a process has in its own PID namespace
#                       (the last NSpid of /proc/PID/status)
#   redis_ping          redis in $CNAME, listening on /tmp/redis.sock,
#                       answers PING (host redis-cli through /proc/PID/root)
#
# CONTAINER_ENGINE=docker (set before sourcing) runs the same helpers on
# Docker instead (Debian's docker.io, /usr/bin/docker): a private dockerd
# of the test's own (docker_daemon_start below), images imported from the
# same roots, Docker's default seccomp profile and capabilities.
CONTAINERS=()
CONTAINER_ENGINE=${CONTAINER_ENGINE:-podman}
bash "$SRCDIR/tools/containers/rootfs.sh" >"$WORK/rootfs.log" 2>&1 ||
    die "the container images could not be made: $(tail -3 "$WORK/rootfs.log")"
case $CONTAINER_ENGINE in
podman)
    CONTAINER_RUN=(--pull never --runtime runc --ulimit nofile=16384:16384 --ulimit nproc=4096:4096)
    RM_OPTS=(-f -t 0)    # podman rm -f waits the stop timeout otherwise
    engine() { podman "$@"; } ;;
docker)
    . "$SRCDIR/tests/integration/docker.sh"
    CONTAINER_RUN=(--pull never)
    RM_OPTS=(-f)
    engine() { /usr/bin/docker -H "unix://$DOCKER_SOCK" "$@"; }
    docker_daemon_start ;;
*) die "CONTAINER_ENGINE=$CONTAINER_ENGINE: podman or docker" ;;
esac

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
    engine create --name "$CNAME" "${CONTAINER_RUN[@]}" "${opts[@]}" "memprof-test/$suite" "$@" \
        >"$WORK/$CNAME.create" 2>&1 || die "$CONTAINER_ENGINE create $CNAME failed: $(cat "$WORK/$CNAME.create")"
    for f in ${FILES:-}; do
        engine cp "${f%%:*}" "$CNAME:${f#*:}" 2>"$WORK/$CNAME.cp" ||
            die "$CONTAINER_ENGINE cp $f failed: $(cat "$WORK/$CNAME.cp")"
    done
    engine start "$CNAME" >"$WORK/$CNAME.start" 2>&1 ||
        die "$CONTAINER_ENGINE start $CNAME failed: $(cat "$WORK/$CNAME.start")"
    CPID=$(engine inspect --format '{{.State.Pid}}' "$CNAME")
    [ "${CPID:-0}" -gt 0 ] && alive "$CPID" ||
        die "container $CNAME has no running process: $(engine logs "$CNAME" 2>&1 | tail -3)"
    PID=$CPID    # for lib.sh's helpers (open_session)
}
remove_containers() {
    local c
    for c in "${CONTAINERS[@]}"; do engine rm "${RM_OPTS[@]}" "$c" >/dev/null 2>&1; done
}
cexec() { engine exec "$CNAME" "$@"; }
in_container() { echo "/proc/$CPID/root$1"; }
ns_pid() { awk '/^NSpid:/ {print $NF}' "/proc/$1/status"; }

# redis in the container, its socket reached from the host through the
# container's root; dies at once if the container's process ended.
REDIS_IN_CONTAINER=(redis-server --save '' --appendonly no --port 0 --unixsocket /tmp/redis.sock)
redis_ping() {
    redis-cli -s "$(in_container /tmp/redis.sock)" ping 2>/dev/null | grep -q PONG && return 0
    alive "$CPID" || die "redis in $CNAME exited: $(engine logs "$CNAME" 2>&1 | tail -3)"
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

# glibc_live_start SUITE [RUN-OPTIONS...]: the glibc_live test program
# (copied into the container's own layer) in a new container, ready for
# its first round; OUTF is its output as the host reads it.
# glibc_live_round N: SIGUSR1, then its round N's "done" line.
glibc_live_start() {
    local suite=$1 prog=/usr/local/bin/memprof-glibc-live
    shift
    FILES="$TARGETS/glibc_live:$prog" container_start "$suite" "$@" -- sh -c "exec $prog >/tmp/target.out 2>&1"
    OUTF=$(in_container /tmp/target.out)
    wait_until 20 "glibc_live in $CNAME to print ready" file_has "$OUTF" '^ready'
}
glibc_live_round() {
    kill -USR1 "$CPID"
    wait_until 20 "round $1 to finish" file_has "$OUTF" "^round $1 done"
}
# sampler_checks WHAT: on glibc_live in $CNAME (started, no round yet):
# `prof on` goes in, one round, `top` gives keep_malloc exactly the bytes
# it kept (rate 0: every allocation), `prof off` takes the sampler out to
# the gate; the process runs on, untraced, and answers round 2.
sampler_checks() {
    local what=$1 want sr
    session_open s
    session_send 'prof sample 0' 'sampling every 2\^0 bytes'
    session_send 'prof on' 'profiling is now on|memprof: '
    check "$what prof on: the sampler went in" grep -q 'profiling is now on' "$WORK/s.out"
    glibc_live_round 1
    session_send dump '^dump1: [0-9]+ stacks|memprof: '
    session_send 'top --json 30' '^}|memprof: '
    session_send 'prof off' 'profiling is now off|memprof: '
    close_session
    check "$what: the session ended well" [ "$MPRC" = 0 ]
    OUT=$(session_out)
    want=$(awk '$1 == "live" && $2 == "keep_malloc" {print $3; exit}' "$OUTF")
    check "$what top: keep_malloc holds exactly what it kept ($want bytes)" \
        [ "$(flat_bytes_of keep_malloc)" = "$want" ]
    sr=$(sampler_smaps "$CPID")
    check "$what prof off: no sampler body left mapped" [ "$(sampler_bodies "$CPID")" = 0 ]
    check "$what prof off: only the gate stays, 8 KiB, at most 8 KiB resident (smaps: $sr)" \
        sampler_gate_only "$sr"
    check "$what: the process is left running, untraced" untouched "$CPID"
    glibc_live_round 2
    check "$what: the process answers the next round" file_has "$OUTF" '^round 2 done'
}
