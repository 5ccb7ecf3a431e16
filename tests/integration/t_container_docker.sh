# Real Docker containers (Debian 12's docker.io 20.10 with its containerd
# and runc, a private dockerd: docker.sh), Docker's default seccomp
# profile and capabilities unless said, driven from the host with host
# PIDs, as t_container_*.sh do under podman:
#  - the sampler: Docker 20.10's default profile lets process_vm_readv
#    through only for a container given CAP_SYS_PTRACE (measured here:
#    EPERM without it; the kernel is asked from inside each container).
#    In a default container the sampler checks stack pages with
#    rt_sigprocmask instead: `info` says it is possible, `prof on` goes
#    in saying so, and `top` gives glibc_live's keep_malloc its exact
#    bytes; with --cap-add SYS_PTRACE it goes in as well (process_vm_readv).
#    Under a profile (--security-opt seccomp=FILE) that denies both calls,
#    `info` and `prof on` refuse, naming both, give Docker's remedies
#    (--cap-add SYS_PTRACE, a seccomp profile allowing the call) besides
#    the restart with jemalloc, and leave the process untouched.
#    `stats`, `memory`, `purge` work in the default container, and
#    jemalloc's own profiler (bookworm's redis) needs no such call.
#  - identity: `info`, `info --json` and every /metrics series of serve on
#    the host carry container_id="docker://<the id docker inspect gives>",
#    the cgroup path /docker/<id> (Docker's cgroupfs driver).
#  - the memory limit of `docker run --memory`, in `memory --json` and
#    /metrics.
#  - bullseye (glibc 2.31, jemalloc 5.2.1, a redis that is not the
#    host's): profiled from its start, a live dump names zmalloc; offline
#    on the host after the container is gone, the dump names nothing from
#    the host's redis, and the run `profile save` kept names zmalloc.
#  - memprof serve inside a Docker container with --pid=host (the
#    documented capabilities, unconfined): /processes lists the bullseye
#    redis with its container, and its heap profile is served.
. "$SRCDIR/tests/integration/lib.sh"
CONTAINER_ENGINE=docker
. "$SRCDIR/tests/integration/containers.sh"

check "docker: Debian's dockerd with runc and the default seccomp profile" \
    holds eval 'engine info --format "{{.ServerVersion}} {{.DefaultRuntime}} {{.SecurityOptions}}" | grep -Eq "^20\.10\..* runc .*name=seccomp,profile=default"'

# ---- the sampler under Docker's default profile: rt_sigprocmask's way ----
glibc_live_start bookworm
check "default container: Docker's seccomp filter is on it" \
    grep -Eq '^Seccomp:[[:space:]]+2$' "/proc/$CPID/status"
# The kernel: process_vm_readv (x86-64: 310) on itself with an empty, bad
# iovec fails EPERM (the filter) here, EFAULT where allowed.
vm_readv_errno() { cexec perl -e 'syscall(310, $$, 0, 1, 0, 1, 0); print $! + 0'; }
check "default container: the kernel fails process_vm_readv with EPERM" [ "$(vm_readv_errno)" = 1 ]
mp -p "$CPID" -e 'info --json'
check "default container info --json: the sampler possible under Docker's filter" \
    [ "$(jf '(d["allocator"]["sampler"]["possible"], d["allocator"]["sampler"]["seccomp_filters"] > 0)')" = "(True, True)" ]
sampler_checks "docker default"
check "default container prof on: says the filter denies process_vm_readv and rt_sigprocmask checks the pages" \
    grep -Eq "note: process $CPID's seccomp filter denies process_vm_readv: the sampler checks a stack page readable with rt_sigprocmask" "$WORK/s.out"
mp -p "$CPID" -e stats -e memory -e purge
check "default container: stats, memory and purge work (glibc malloc)" \
    holds eval 'assert_ok && assert_out "^free, held +[0-9.]+ MiB" && assert_out "^RSS +[0-9.]+ MiB +[0-9.]+ MiB"'
check "default container: untouched after them" untouched "$CPID"
DEFAULT_CPID=$CPID

# ---- a profile that denies both ways: refused, and Docker's remedies ----
printf '%s\n' '{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names":' \
    '["process_vm_readv", "rt_sigprocmask"], "action": "SCMP_ACT_ERRNO"}]}' >"$WORK/deny-probes.json"
glibc_live_start bookworm --security-opt seccomp="$WORK/deny-probes.json"
mp -p "$CPID" -e 'info --json'
check "both denied, info --json: the sampler not possible, naming both calls" \
    holds eval '[ "$(jf "d[\"allocator\"][\"sampler\"][\"possible\"]")" = False ] &&
        jf "d[\"allocator\"][\"sampler\"][\"why_not\"]" | grep -q "errno 1 (EPERM) for process_vm_readv and would fail it with errno 1 (EPERM) for rt_sigprocmask"'
mp -p "$CPID" -e info
check "both denied, info: not possible, and the remedies Docker has (--cap-add SYS_PTRACE, a seccomp profile)" \
    out_has 'heap profiling +not possible without a restart: .*for rt_sigprocmask.*; to profile it, restart its container with --cap-add SYS_PTRACE .* or with a seccomp profile \(--security-opt seccomp=FILE\) that allows process_vm_readv, or restart it with LD_PRELOAD='
mp -p "$CPID" -e 'prof on'
check "both denied, prof on: refused, naming both calls" \
    err_has 'seccomp filter would fail it with errno 1 \(EPERM\) for process_vm_readv and would fail it with errno 1 \(EPERM\) for rt_sigprocmask'
check "both denied, prof on: the refusal gives Docker's remedies and the restart with jemalloc" \
    err_has 'To profile it, restart its container with --cap-add SYS_PTRACE .* or with a seccomp profile \(--security-opt seccomp=FILE\) that allows process_vm_readv, or restart it with LD_PRELOAD=.*libjemalloc'
check "both denied: untouched" untouched "$CPID"
check "both denied: no sampler body went in" [ "$(sampler_bodies "$CPID")" = 0 ]

# ---- ... and it goes in with CAP_SYS_PTRACE ----
glibc_live_start bookworm --cap-add SYS_PTRACE
mp -p "$CPID" -e 'info --json'
check "SYS_PTRACE container info --json: the sampler possible under Docker's filter" \
    [ "$(jf '(d["allocator"]["sampler"]["possible"], d["allocator"]["sampler"]["seccomp_filters"] > 0)')" = "(True, True)" ]
check "SYS_PTRACE container: the kernel lets process_vm_readv through (EFAULT)" \
    [ "$(vm_readv_errno)" = 14 ]
sampler_checks "docker SYS_PTRACE"

# ---- jemalloc's own profiler needs no such call: bookworm's redis ----
container_start bookworm -e MALLOC_CONF=prof:true,prof_active:false -- "${REDIS_IN_CONTAINER[@]}"
wait_until 20 "redis in $CNAME to answer PING" redis_ping
session_open redis
session_send 'prof sample 15' 'sampling every 2\^15'
session_send 'prof on' 'profiling is now on|memprof: '
redis_fill 100000
session_send dump '^dump1: [0-9]+ stacks|memprof: '
session_send 'top --json 10' '^}|memprof: '
session_send 'prof off' 'profiling is now off|memprof: '
close_session
check "default container, jemalloc 5.3 redis: prof on/dump/top/off ended well" [ "$MPRC" = 0 ]
OUT=$(session_out)
check "default container, jemalloc redis top: zmalloc holds the keys" \
    [ "$(flat_bytes_of zmalloc)" -ge $((1024 * 1024)) ]
check "default container, jemalloc redis: answers PING, untouched" holds eval 'redis_ping && untouched $CPID'

# ---- identity ----
CPID=$DEFAULT_CPID
ID=$(engine inspect --format '{{.Id}}' "${CONTAINERS[0]}")
mp -p "$CPID" -e info
check "info: docker://<its 64-hex id>" out_has "^container +docker://$ID\$"
check "info: its cgroup, /docker/<id> (cgroupfs driver)" out_has "^  cgroup +/docker/$ID \\("
check "info: its pid inside is 1" out_has '^  pid inside +1 \(in its own pid namespace\)$'
mp -p "$CPID" -e 'info --json'
check "info --json: container runtime docker, container_id" \
    [ "$(jf 'd["container"]["runtime"] + " " + d["container"]["container_id"]')" = "docker docker://$ID" ]

# ---- bullseye redis, a memory limit, profiled from its start ----
LIMIT=$((256 * 1024 * 1024))
container_start bullseye --memory 256m -e MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:10 -- \
    "${REDIS_IN_CONTAINER[@]}"
wait_until 20 "redis in $CNAME to answer PING" redis_ping
RD=$CPID
RD_ID=$(engine inspect --format '{{.Id}}' "$CNAME")
redis_fill 20000
mp -p "$RD" -e 'memory --json'
check "memory --json: docker run --memory's limit" [ "$(jf 'd["cgroup"]["memory_max"]')" = "$LIMIT" ]
check "memory --json: the container's cgroup" [ "$(jf 'd["cgroup"]["path"]')" = "/docker/$RD_ID" ]
mp -q -p "$RD" -e "dump $WORK/b.heap" -e 'top --json 10' -e "profile save $WORK/brun"
check "bullseye live: dump, top, profile save ran" mp_ok
check "bullseye live top: zmalloc, from the container's redis" [ "$(flat_bytes_of zmalloc)" -ge $((1024 * 1024)) ]
check "bullseye: untouched" untouched "$RD"

# ---- serve on the host: labels and the limit ----
start_serve --target comm=redis-server
http GET "/metrics?pid=$RD"
check "/metrics: every series of the container's redis carries its container_id" \
    awk -v pid="$RD" -v id="container_id=\"docker://$RD_ID\"" '
        index($0, "{pid=\"" pid "\"") { n++; if (!index($0, id)) bad++ } END { exit !(n > 3 && !bad) }' "$WORK/body"
check "/metrics: the limit" \
    body_has "^memprof_cgroup_memory_limit_bytes\\{pid=\"$RD\"[^}]*\\} $LIMIT\$"
kill "$SERVE_PID"; wait "$SERVE_PID" 2>/dev/null

# ---- serve in a container, --pid=host ----
BUILD_DIR=$(dirname "$MEMPROF")
container_start bookworm --pid=host --network host --cap-drop=all --security-opt seccomp=unconfined \
    --cap-add SYS_PTRACE --cap-add SYS_ADMIN --cap-add DAC_OVERRIDE --cap-add SYS_NICE \
    -v "$MEMPROF:/opt/memprof/memprof:ro" -v "$BUILD_DIR/memprof-serve:/opt/memprof/memprof-serve:ro" \
    -- /opt/memprof/memprof serve --listen 127.0.0.1:0 --target comm=redis-server
serve_port() { engine logs "$CNAME" 2>&1 | grep -o 'listening on 127.0.0.1:[0-9]*' | cut -d: -f2; }
serve_listening() {
    [ -n "$(serve_port)" ] && return 0
    alive "$CPID" || die "memprof serve in $CNAME exited: $(engine logs "$CNAME" 2>&1 | tail -3)"
    return 1
}
wait_until 20 "memprof serve in $CNAME to listen" serve_listening
SERVE_URL=http://127.0.0.1:$(serve_port)
http GET /processes
check "serve in Docker, --pid=host: /processes lists the redis with its container" \
    python3 -c 'import json, sys
p = [p for p in json.load(open(sys.argv[1]))["processes"] if p["pid"] == int(sys.argv[2])]
sys.exit(not (p and p[0]["container"]["container_id"] == "docker://" + sys.argv[3] and not p[0].get("error")))' \
    "$WORK/body" "$RD" "$RD_ID"
http GET "/debug/pprof/heap?pid=$RD"
check "serve in Docker: the redis's heap profile served" status_is 200
check "bullseye redis: answers PING, untouched" holds eval 'CPID=$RD redis_ping && untouched $RD'

# ---- offline, the container gone ----
engine rm -f "${CONTAINERS[@]}" >/dev/null 2>&1
wait_until 20 "the containers' processes to end" sh -c "! kill -0 $RD 2>/dev/null"
mp "$WORK/b.heap" -e 'top 10'
# Its biggest row is zmalloc's site; the host's redis (another build)
# would give it a name, wrongly.
top_row_is() { awk '/flat%/ {getline; print $NF; exit}' <<<"$OUT" | grep -Eq -- "$1"; }
check "offline dump: the top row, in the container's redis, is redis-check-rdb+0xOFF, named from no host file" \
    top_row_is '^redis-check-rdb\+0x[0-9a-f]+$'
check "offline dump: says the mapped build is not the file there" \
    err_has 'cannot symbolize /usr/bin/redis-check-rdb: the process had build-id [0-9a-f]+ mapped'
mp "$WORK/brun" -e 'top --json 10'
check "offline run directory: zmalloc, from the kept copy of the container's redis" \
    [ "$(flat_bytes_of zmalloc)" -ge $((1024 * 1024)) ]
