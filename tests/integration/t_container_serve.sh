# memprof serve in a podman container with --pid=host (as a Kubernetes
# DaemonSet with hostPID runs it), the build's memprof and memprof-serve
# bind-mounted into a bookworm image, every capability dropped and only
# the documented ones added (docs/containers.md); scraped from the host
# by curl (--network host: it listens on the host's loopback).  Targets:
# a jemalloc process on the host, one of another user (nobody), and
# Debian's redis in another container (podman's default seccomp profile).
#  - SYS_PTRACE + SYS_ADMIN + DAC_OVERRIDE + SYS_NICE, unfiltered
#    (seccomp=unconfined): all served; /processes lists them; /metrics
#    has their statistics; the container's redis's pprof heap names
#    zmalloc, read from the container's files.
#  - without DAC_OVERRIDE: the other user's process is refused, naming
#    CAP_DAC_OVERRIDE (its /proc/PID/mem is that user's, mode 0600).
#  - at start, the agent notes each missing capability and its own seccomp
#    filter with what they cost, and nothing with the documented set.
#  - no capability: refused, saying CAP_SYS_PTRACE is missing and how to
#    give it, never "run memprof as root" (it is root); a --target exe=
#    rule cannot match (the path is unreadable without ptrace access): a
#    request for the process says so.
#  - SYS_PTRACE only, podman's default seccomp profile on the agent: the
#    host process is served; the filtered redis is refused, naming both
#    missing parts (its own filter, CAP_SYS_ADMIN) and the remedy.
# Every target left running, untraced.
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/integration/containers.sh"

mkdir "$WORK/bin" && cp "$TARGETS/known_heap" "$WORK/bin/" && cp "$TARGETS/plain" "$WORK/bin/other_user"
TARGETS=$WORK/bin CONF=prof:true start_target known_heap
KH=$PID
# plain as nobody: $WORK searchable, its output file nobody's.
chmod 711 "$WORK" && chmod 755 "$WORK/bin"
touch "$WORK/other.out" && chown nobody "$WORK/other.out"
setpriv --reuid=nobody --regid=nogroup --clear-groups "$WORK/bin/other_user" >"$WORK/other.out" 2>&1 &
OU=$!
PIDS+=("$OU")
wait_until 20 "the other user's process to print ready" file_has "$WORK/other.out" '^ready'
container_start bookworm -e MALLOC_CONF=prof:true,lg_prof_sample:12 -- "${REDIS_IN_CONTAINER[@]}"
wait_until 20 "redis in $CNAME to answer PING" redis_ping
RD=$CPID
redis_fill 20000

# serve_in_container PODMAN-OPTIONS...: memprof serve in a container of the
# host's PID namespace, on the host's loopback (a free port, read from its
# log), with the --target rules in RULES; sets SERVE_URL for lib.sh's http.
RULES=(--target comm=known_heap --target comm=redis-server --target comm=other_user)
BUILD_DIR=$(dirname "$MEMPROF")
serve_in_container() {
    container_start bookworm --pid=host --network host --cap-drop=all "$@" \
        -v "$MEMPROF:/opt/memprof/memprof:ro" -v "$BUILD_DIR/memprof-serve:/opt/memprof/memprof-serve:ro" \
        -- /opt/memprof/memprof serve --listen 127.0.0.1:0 "${RULES[@]}"
    wait_until 20 "memprof serve in $CNAME to listen" serve_listening
    SERVE_URL=http://127.0.0.1:$(podman logs "$CNAME" 2>&1 | grep -o 'listening on 127.0.0.1:[0-9]*' | cut -d: -f2)
}
serve_listening() {
    podman logs "$CNAME" 2>&1 | grep -q 'listening on 127.0.0.1:' && return 0
    alive "$CPID" || die "memprof serve in $CNAME exited: $(podman logs "$CNAME" 2>&1 | tail -3)"
    return 1
}
# error_of PID: the error /processes (in $WORK/body) gives for PID, if any.
error_of() {
    python3 -c 'import json, sys
for p in json.load(open(sys.argv[1]))["processes"]:
    if p["pid"] == int(sys.argv[2]):
        print(p.get("error") or "")' "$WORK/body" "$1"
}
up_is() { body_has "^memprof_target_up\\{pid=\"$1\".*\\} $2\$"; }
# serve_log_has RE / serve_log_lacks RE: the agent's stderr (podman logs).
serve_log_has() { podman logs "$CNAME" 2>&1 | grep -Eq -- "$1"; }
serve_log_lacks() { ! serve_log_has "$1"; }

# --- the documented set ------------------------------------------------------
serve_in_container --security-opt seccomp=unconfined \
    --cap-add SYS_PTRACE,SYS_ADMIN,DAC_OVERRIDE,SYS_NICE
check "documented set: the agent sees the host's processes (its PID 1 is the host's)" \
    [ "$(ns_pid "$CPID")" = "$CPID" ]
check "documented set: no note of a missing capability at start" serve_log_lacks 'note: (without CAP_|memprof runs under a seccomp)'
http GET /processes
check "documented set: /processes 200" status_is 200
check "documented set: the host process, jemalloc" [ "$(error_of "$KH")" = "" ] && body_has "\"pid\":$KH,[^}]*\"allocator\":\"jemalloc\""
check "documented set: the container's redis, jemalloc" [ "$(error_of "$RD")" = "" ] && body_has "\"pid\":$RD,[^}]*\"allocator\":\"jemalloc\""
http GET "/metrics?pid=$KH"
check "documented set: the host process's metrics (allocated above 100 MB)" \
    awk -v pid="$KH" '$1 ~ "^jemalloc_allocated_bytes\\{pid=\"" pid "\"" && $2 > 100e6 { f = 1 } END { exit !f }' "$WORK/body"
http GET "/metrics?pid=$RD"
check "documented set: the container's redis is up" up_is "$RD" 1
http GET "/debug/pprof/heap?pid=$RD"
check "documented set: redis's pprof heap 200" status_is 200
zcat "$WORK/body" | protoc --proto_path="$SRCDIR/lib/profile" \
    --decode=perftools.profiles.Profile "$SRCDIR/lib/profile/pprof.proto" >"$WORK/redis.txt" 2>&1
check "documented set: the pprof profile names zmalloc (the container's redis)" \
    file_has "$WORK/redis.txt" '"zmalloc"'
http GET "/metrics?pid=$OU"
check "documented set: the other user's process is up" up_is "$OU" 1
check "documented set: host process untouched" untouched "$KH"
check "documented set: redis untouched" untouched "$RD"

# --- without DAC_OVERRIDE ------------------------------------------------------
serve_in_container --security-opt seccomp=unconfined --cap-add SYS_PTRACE,SYS_ADMIN,SYS_NICE
http GET /processes
check "no DAC_OVERRIDE: the other user's process is refused, naming CAP_DAC_OVERRIDE" \
    grep -q "mem: Permission denied: it belongs to the process's user, and memprof runs as root but without CAP_DAC_OVERRIDE" <<<"$(error_of "$OU")"
check "no DAC_OVERRIDE: root's process is served" [ "$(error_of "$KH")" = "" ]
check "no DAC_OVERRIDE: said at start, with its cost" \
    serve_log_has '^memprof serve: note: without CAP_DAC_OVERRIDE: processes of other users are refused'
check "no DAC_OVERRIDE: the others present, not noted" serve_log_lacks 'without CAP_(SYS_PTRACE|SYS_ADMIN|SYS_NICE)'
check "no DAC_OVERRIDE: the other user's process untouched" untouched "$OU"

# --- no capability -----------------------------------------------------------
serve_in_container --security-opt seccomp=unconfined
http GET /processes
check "no capability: the host process is refused, naming CAP_SYS_PTRACE as missing" \
    grep -q 'runs as root but without CAP_SYS_PTRACE.*--cap-add SYS_PTRACE' <<<"$(error_of "$KH")"
check "no capability: never 'run memprof as root' (it is root)" \
    bash -c '! grep -q "run memprof as root" "$1"' _ "$WORK/body"
http GET "/metrics?pid=$KH"
check "no capability: memprof_target_up 0" up_is "$KH" 0
# A rule on the executable's path cannot match what memprof may not read.
RULES=(--target "exe=$WORK/bin/known_heap")
serve_in_container --security-opt seccomp=unconfined
http GET "/metrics?pid=$KH"
check "no capability, exe= rule: 403" status_is 403
check "no capability, exe= rule: says the executable cannot be read, and CAP_SYS_PTRACE" \
    body_has "its executable's path cannot be read \(/proc/$KH/exe: Permission denied\), so no --target exe= rule can match it.*CAP_SYS_PTRACE"
RULES=(--target comm=known_heap --target comm=redis-server --target comm=other_user)

# --- SYS_PTRACE only, under podman's default seccomp profile -------------------
serve_in_container --cap-add SYS_PTRACE
http GET "/metrics?pid=$KH"
check "SYS_PTRACE: the host process (no filter) is served" up_is "$KH" 1
http GET /processes
err=$(error_of "$RD")
check "SYS_PTRACE: the filtered redis is refused, naming the agent's own filter and CAP_SYS_ADMIN" \
    grep -q 'memprof itself runs under a seccomp filter and without CAP_SYS_ADMIN' <<<"$err"
check "SYS_PTRACE: ... and the remedy" grep -q 'seccomp=unconfined --cap-add SYS_ADMIN' <<<"$err"
check "SYS_PTRACE: said at start: no SYS_ADMIN, its own filter" \
    bash -c 'podman logs "$1" 2>&1 | grep -q "note: without CAP_SYS_ADMIN: processes under a seccomp filter" &&
             podman logs "$1" 2>&1 | grep -q "note: memprof runs under a seccomp filter"' _ "$CNAME"
http GET "/metrics?pid=$RD"
check "SYS_PTRACE: redis is down in /metrics" up_is "$RD" 0
check "SYS_PTRACE: host process untouched" untouched "$KH"
check "SYS_PTRACE: redis untouched" untouched "$RD"
check "SYS_PTRACE: redis answers PING" sh -c "redis-cli -s /proc/$RD/root/tmp/redis.sock ping | grep -q PONG"
