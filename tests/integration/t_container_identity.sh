# Which container and pod a process is in (issue 33, item 3), from the
# host's view of /proc/PID/cgroup: targets moved into real cgroups named as
# the runtimes name them on this host (every hierarchy memprof keeps: v1's
# memory, pids and name=systemd and v2's unified one on a hybrid host, the
# unified one alone on a v2 host), one Docker container (systemd driver)
# one Kubernetes burstable pod's containerd container (systemd driver), one
# besteffort pod's container made by the kubelet's cgroupfs driver (in v1's
# hierarchies only on a hybrid host); another process in no container.  Checked: info and info --json; memprof serve's
# /processes; every /metrics series of each labelled with container_id
# (as kube-state-metrics writes it), pod_uid and qos, none for the third;
# Prometheus joining them with a kube_pod_container_info series on
# container_id (the join docs/serve.md gives) to get the pod's name; the
# pprof profile's labels (go tool pprof -tags); --target container= (short
# id, RUNTIME://id) and cgroup= rules selecting and leaving out, and bad
# rules refused; a target in its own pid namespace: its NSpid.  The
# cgroups are removed at the end.
. "$SRCDIR/tests/integration/lib.sh"

hex64() { head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n'; }
ID1=$(hex64) ID2=$(hex64) OTHER=$(hex64)
POD=$(cat /proc/sys/kernel/random/uuid)
DOCKER_CG=/system.slice/docker-$ID1.scope
KUBE_CG=/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${POD//-/_}.slice/cri-containerd-$ID2.scope

# The hierarchies a container's processes are in on this host.
if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
    HIER=(/sys/fs/cgroup)
else
    HIER=()
    for h in memory pids systemd unified; do
        [ -d "/sys/fs/cgroup/$h" ] && HIER+=("/sys/fs/cgroup/$h")
    done
fi
[ ${#HIER[@]} -gt 0 ] || die "no cgroup hierarchy found under /sys/fs/cgroup"
# Under a v2 root, the memory controller must be delegated down for a
# child to hold processes with it; the test needs none of that.
MADE=()
# into_cgroup PATH PID [HIERARCHY...]: PATH made in every hierarchy (or
# in those given), PID moved there.
into_cgroup() {
    local h d sub path=$1 pid=$2
    shift 2
    local hs=("$@")
    [ $# -gt 0 ] || hs=("${HIER[@]}")
    for h in "${hs[@]}"; do
        sub=""
        for d in ${path//\// }; do
            sub=$sub/$d
            [ -d "$h$sub" ] || { mkdir "$h$sub" || die "cannot make cgroup $h$sub"; MADE+=("$h$sub"); }
        done
        echo "$pid" >"$h$path/cgroup.procs" || die "cannot move $pid into $h$path"
    done
}
# The targets leave their cgroups (killed, reaped), then the cgroups go,
# deepest first.
remove_cgroups() {
    local i
    for p in "${CG_PIDS[@]}"; do kill -9 "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
    for ((i = ${#MADE[@]} - 1; i >= 0; i--)); do rmdir "${MADE[$i]}" 2>/dev/null; done
}
CG_PIDS=()
CLEANUP_HOOKS+=(remove_cgroups)

mkdir "$WORK/bin" && cp "$TARGETS/known_heap" "$TARGETS/glibc_live" "$TARGETS/plain" "$WORK/bin/"
TARGETS=$WORK/bin
CONF=prof:true start_target known_heap
DK=$PID
CG_PIDS+=("$PID")
into_cgroup "$DOCKER_CG" "$DK"
CONF= start_target glibc_live
KB=$PID
CG_PIDS+=("$PID")
into_cgroup "$KUBE_CG" "$KB"
CONF= start_target plain
HOST=$PID
# The kubelet's cgroupfs driver, a besteffort pod: on a hybrid host in
# v1's memory and pids hierarchies only (its unified one stays the
# parent's), so the container is found in memory's.
CFS_CG=/kubepods/besteffort/pod$POD/$OTHER
CONF= start_target plain
CF=$PID
CG_PIDS+=("$PID")
if [ "${HIER[0]}" = /sys/fs/cgroup ]; then
    into_cgroup "$CFS_CG" "$CF"
    CFS_HIER=unified
else
    into_cgroup "$CFS_CG" "$CF" /sys/fs/cgroup/memory /sys/fs/cgroup/pids
    CFS_HIER=memory
fi

# ---- info ----
mp -p "$DK" -e info
check "info: the Docker container's id, as kube-state-metrics writes it" \
    out_has "^container +docker://$ID1\$"
check "info: its cgroup path" out_has "^  cgroup +$DOCKER_CG \\("
check "info: a process in memprof's pid namespace: the same pid inside" \
    out_has '^  pid inside +the same'
mp -p "$DK" -e 'info --json'
jv() { [ "$(jf "$1")" = "$2" ] || { echo "  $1 is $(jf "$1"), not $2" >&2; return 1; }; }
check "info --json: container.container_id" jv 'd["container"]["container_id"]' "docker://$ID1"
check "info --json: container.runtime and id" jv 'd["container"]["runtime"] + " " + d["container"]["id"]' "docker $ID1"
check "info --json: cgroup.path" jv 'd["cgroup"]["path"]' "$DOCKER_CG"
check "info --json: no pod" jv 'd["pod"]' None
check "info --json: nspid, the host pid" jv 'd["nspid"]' "$DK"

mp -p "$KB" -e info
check "info: the pod's containerd container" out_has "^container +containerd://$ID2\$"
check "info: the pod's uid (dashes back) and QoS class" out_has "^  pod +uid $POD, QoS class burstable\$"
mp -p "$KB" -e 'info --json'
check "info --json: pod.uid and pod.qos" jv 'd["pod"]["uid"] + " " + d["pod"]["qos"]' "$POD burstable"
check "info --json: container.runtime containerd" jv 'd["container"]["runtime"]' containerd

mp -p "$CF" -e 'info --json'
check "info --json, cgroupfs pod: the bare id (the path does not say the runtime)" \
    jv 'd["container"]["container_id"] + " " + str(d["container"]["runtime"])' "$OTHER None"
check "info --json, cgroupfs pod: pod uid, besteffort" \
    jv 'd["pod"]["uid"] + " " + d["pod"]["qos"]' "$POD besteffort"
check "info --json, cgroupfs pod: the path and the hierarchy it was found in" \
    jv 'd["cgroup"]["path"] + " " + d["cgroup"]["hierarchy"]' "$CFS_CG $CFS_HIER"

mp -p "$HOST" -e 'info --json'
check "info --json, a process in no container: container null" jv 'd["container"]' None
mp -p "$HOST" -e info
check "info: a process in no container says so" out_has '^container +none named by its cgroup$'

# ---- memprof serve ----
start_serve --target "exe=$WORK/bin/*"
http GET /processes
proc() { python3 -c '
import json, sys
d = {p["pid"]: p for p in json.load(open(sys.argv[1]))["processes"]}
p = d.get(int(sys.argv[2])) or sys.exit("no process " + sys.argv[2])
print(eval(sys.argv[3]))' "$WORK/body" "$@"; }
pv() { [ "$(proc "$1" "$2")" = "$3" ] || { echo "  $2 is $(proc "$1" "$2")" >&2; return 1; }; }
check "/processes: the Docker container" pv "$DK" 'p["container"]["container_id"]' "docker://$ID1"
check "/processes: the pod's container, pod uid and QoS" \
    pv "$KB" 'p["container"]["container_id"] + " " + p["pod"]["uid"] + " " + p["pod"]["qos"]' \
    "containerd://$ID2 $POD burstable"
check "/processes: its cgroup path" pv "$KB" 'p["cgroup"]["path"]' "$KUBE_CG"
check "/processes: the host process has no container" pv "$HOST" 'p["container"]' None

http GET /metrics
# every_series PID LABELS: every sample of PID carries exactly LABELS
# after pid, comm and name (and before a series' own: arena, category,
# window).
every_series() {
    awk -v pid="$1" -v want="$2" '
        index($0, "{pid=\"" pid "\"") { n++; l = $1; sub(/^[^{]*\{pid="[0-9]+",comm="[^"]*",name="[^"]*"/, "", l)
            sub(/,(arena|category|window)="[^"]*"/, "", l); if (l != want "}") { print "  " $0 > "/dev/stderr"; bad++ } }
        END { exit !(n > 3 && !bad) }' "$WORK/body"
}
check "/metrics: every series of the Docker container: container_id" \
    every_series "$DK" ",container_id=\"docker://$ID1\""
check "/metrics: every series of the pod's container: container_id, pod_uid, qos" \
    every_series "$KB" ",container_id=\"containerd://$ID2\",pod_uid=\"$POD\",qos=\"burstable\""
check "/metrics: the host process: no container labels" every_series "$HOST" ""
check "/metrics: the cgroupfs pod's process: the bare id, pod_uid, qos" \
    every_series "$CF" ",container_id=\"$OTHER\",pod_uid=\"$POD\",qos=\"besteffort\""
check "promtool check metrics passes with the new labels" sh -c "promtool check metrics <'$WORK/body'"

# GET /targets (http_sd): each process's group carries the same labels.
http GET /targets
sdl() { python3 -c '
import json, sys
g = [g for g in json.load(open(sys.argv[1])) if g["labels"]["pid"] == sys.argv[2]]
print(",".join(k + "=" + v for k, v in sorted(g[0]["labels"].items()) if k in ("container_id", "pod_uid", "qos")))' "$WORK/body" "$1"; }
check "/targets: the pod's container: container_id, pod_uid, qos" \
    [ "$(sdl "$KB")" = "container_id=containerd://$ID2,pod_uid=$POD,qos=burstable" ]
check "/targets: the Docker container: container_id" [ "$(sdl "$DK")" = "container_id=docker://$ID1" ]
check "/targets: the host process: no container labels" [ -z "$(sdl "$HOST")" ]

# The join docs/serve.md gives: kube-state-metrics' series (served here
# from a file) give the pod's name and namespace.
mkdir "$WORK/ksm"
cat >"$WORK/ksm/metrics.txt" <<EOF
# TYPE kube_pod_container_info gauge
kube_pod_container_info{namespace="shop",pod="web-0",uid="$POD",container="app",container_id="containerd://$ID2"} 1
EOF
KSM_PORT=$(free_port)
python3 -m http.server -b 127.0.0.1 -d "$WORK/ksm" "$KSM_PORT" >"$WORK/ksm.log" 2>&1 &
PIDS+=("$!")
cat >"$WORK/prometheus.yml" <<YML
global: {scrape_interval: 1s, scrape_timeout: 1s}
scrape_configs:
  - job_name: memprof
    static_configs: [{targets: ['${SERVE_URL#http://}']}]
  - job_name: kube-state-metrics
    metrics_path: /metrics.txt
    static_configs: [{targets: ['127.0.0.1:$KSM_PORT']}]
YML
start_prometheus
JOIN='memprof_process_resident_bytes * on(container_id) group_left(namespace, pod, container) kube_pod_container_info'
wait_until 60 "prometheus to have scraped both" prom_query "$JOIN"
check "prometheus: the join on container_id gives the pod's name and namespace" \
    python3 -c 'import json,sys; r = json.load(open(sys.argv[1]))["data"]["result"]
m = r[0]["metric"]; sys.exit(not (len(r) == 1 and m["pod"] == "web-0" and m["namespace"] == "shop" and m["pid"] == sys.argv[2]))' \
    "$WORK/q.json" "$KB"

http GET "/debug/pprof/heap?pid=$DK"
cp "$WORK/body" "$WORK/dk.pb.gz"
check "pprof: the profile is served" status_is 200
go tool pprof -tags "$WORK/dk.pb.gz" >"$WORK/tags.txt" 2>"$WORK/tags.err"
cat "$WORK/tags.txt" >&2
check "pprof: every sample labelled container_id (go tool pprof -tags)" \
    grep -Eq "^ +[0-9.]+[kMG]?B \( *100(\.0)?%\): docker://$ID1\$" "$WORK/tags.txt"

# ---- --target rules ----
stop_serve() { kill "$SERVE_PID"; wait "$SERVE_PID" 2>/dev/null; }
served() { http GET /processes; python3 -c 'import json,sys
print(" ".join(str(p["pid"]) for p in json.load(open(sys.argv[1]))["processes"]))' "$WORK/body"; }
is() { [ "$("$1")" = "$2" ] || { echo "  got $("$1")" >&2; return 1; }; }
stop_serve
start_serve --target "container=${ID1:0:12}"
check "--target container=<docker ps' 12 digits>: that container's process only" is served "$DK"
stop_serve
start_serve --target "container=containerd://$ID2"
check "--target container=containerd://<64 hex>: the pod's process only" is served "$KB"
stop_serve
start_serve --target "container=docker://$ID2"
check "--target container= with another runtime: not served" is served ""
stop_serve
start_serve --target "container=${OTHER:0:16}"
http GET "/metrics?pid=$DK"
check "--target container= of another container: the Docker process is left out (403)" status_is 403
stop_serve
start_serve --target "cgroup=/kubepods.slice/*"
check "--target cgroup=/kubepods.slice/*: the pod's process only" is served "$KB"
stop_serve
refused() {
    "$MEMPROF" serve --listen 127.0.0.1:0 --target "$1" >"$WORK/refused.out" 2>&1 &&
        return 1
    grep -q -- "$2" "$WORK/refused.out" || { cat "$WORK/refused.out" >&2; return 1; }
}
check "--target container=xyz refused: hex digits" refused container=xyz "a container id is 12 to 64 hex digits"
check "--target container=<11 digits> refused" refused "container=${ID1:0:11}" "12 to 64 hex"
check "--target container=rkt://... refused: the runtimes named" refused "container=rkt://$ID1" "one of docker, containerd, cri-o, podman"
check "--target cgroup=kubepods refused: a path begins with /" refused cgroup=kubepods "begins with /"

# ---- its own pid namespace ----
unshare --pid --fork --mount-proc env MALLOC_CONF=prof:true,prof_active:false \
    "$TARGETS/plain" >"$WORK/ns.out" 2>"$WORK/ns.err" &
NS=$!
PIDS+=("$NS")
wait_until 20 "the target in its own pid namespace to be ready" grep -q '^ready' "$WORK/ns.out"
NSPID=$(pgrep -P "$NS")
PIDS+=("$NSPID")
mp -p "$NSPID" -e info
check "info: its pid inside its own pid namespace is 1" out_has '^  pid inside +1 \(in its own pid namespace\)$'
mp -p "$NSPID" -e 'info --json'
check "info --json: nspid 1" jv 'd["nspid"]' 1
start_serve --target "exe=$WORK/bin/plain"
http GET /processes
check "/processes: nspid 1" pv "$NSPID" 'p["nspid"]' 1
check "the targets are alive" sh -c "kill -0 $DK && kill -0 $KB && kill -0 $CF && kill -0 $HOST && kill -0 $NSPID"
