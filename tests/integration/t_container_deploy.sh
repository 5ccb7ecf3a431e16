# The Kubernetes manifests in deploy/kubernetes, checked and run: every
# YAML document parses (python3-yaml); the DaemonSet has hostPID, the
# node name from spec.nodeName, the pod IP as listen address, the
# --web-config from the Secret, every capability dropped but the four
# docs/containers.md explains, and no seccomp filter of its own; the
# PodMonitor scrapes the port the DaemonSet names with the Secret's
# credentials.  Then the DaemonSet's container as podman runs it: the
# capabilities and seccomp setting read from the manifest, --pid=host,
# the build bind-mounted, its arguments with the pod IP as 127.0.0.1:
# the Secret's placeholder hash is refused at start (exit 2, naming the
# file), and with a real bcrypt hash the agent serves a host process and
# one in another container (podman's default seccomp profile) to a
# scrape with the Secret's user, and 401 without.
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/integration/containers.sh"

DEPLOY=$SRCDIR/deploy/kubernetes
# yq EXPR: a Python expression over every document of the manifests
# (docs: the Kubernetes objects, dicts; kind(K): the first of kind K).
yq() {
    python3 - "$DEPLOY" "$1" <<'PY'
import glob, sys, yaml
docs = [d for f in sorted(glob.glob(sys.argv[1] + "/*.yaml")) for d in yaml.safe_load_all(open(f)) if d and "kind" in d]
kind = lambda k: next(d for d in docs if d["kind"] == k)
print(eval(sys.argv[2]))
PY
}
check "every manifest parses" yq 'len(docs)'
POD='kind("DaemonSet")["spec"]["template"]["spec"]'
C="$POD[\"containers\"][0]"
check "DaemonSet: hostPID" [ "$(yq "$POD['hostPID']")" = True ]
check "DaemonSet: NODE_NAME from spec.nodeName" \
    [ "$(yq "[e['valueFrom']['fieldRef']['fieldPath'] for e in $C['env'] if e['name'] == 'NODE_NAME'][0]")" = spec.nodeName ]
check "DaemonSet: POD_IP from status.podIP" \
    [ "$(yq "[e['valueFrom']['fieldRef']['fieldPath'] for e in $C['env'] if e['name'] == 'POD_IP'][0]")" = status.podIP ]
check "DaemonSet: listens on the pod IP" [ "$(yq "'--listen=\$(POD_IP):9188' in $C['args']")" = True ]
check "DaemonSet: --web-config from the Secret's volume" \
    [ "$(yq "'--web-config=/etc/memprof/web-config.yml' in $C['args'] and any(v.get('secret', {}).get('secretName') == 'memprof-web-config' for v in $POD['volumes'])")" = True ]
CAPS=$(yq "','.join($C['securityContext']['capabilities']['add'])")
check "DaemonSet: every capability dropped, four added ($CAPS)" \
    [ "$(yq "$C['securityContext']['capabilities']['drop']")" = "['ALL']" ] && [ "$CAPS" = SYS_PTRACE,SYS_ADMIN,DAC_OVERRIDE,SYS_NICE ]
check "DaemonSet: allowPrivilegeEscalation not false beside SYS_ADMIN (Kubernetes refuses that)" \
    [ "$(yq "$C['securityContext'].get('allowPrivilegeEscalation', True)")" = True ]
check "DaemonSet: no seccomp filter of its own" [ "$(yq "$C['securityContext']['seccompProfile']['type']")" = Unconfined ]
check "docs/containers.md explains each capability" \
    bash -c 'for c in ${1//,/ }; do grep -q "^| \`$c\`" "$2" || exit 1; done' _ "$CAPS" "$SRCDIR/docs/containers.md"
check "namespace: Pod Security level privileged" \
    [ "$(yq "kind('Namespace')['metadata']['labels']['pod-security.kubernetes.io/enforce']")" = privileged ]
check "PodMonitor: scrapes the DaemonSet's port" \
    [ "$(yq "kind('PodMonitor')['spec']['podMetricsEndpoints'][0]['port'] in [p['name'] for p in $C['ports']]")" = True ]
check "PodMonitor: with the credentials Secret" \
    [ "$(yq "kind('PodMonitor')['spec']['podMetricsEndpoints'][0]['basicAuth']['password']['name']")" = memprof-scrape-credentials ]
check "Parca's scrape config parses, the pprof heap path" \
    python3 -c 'import sys, yaml; c = yaml.safe_load(open(sys.argv[1])); assert c["scrape_configs"][0]["profiling_config"]["pprof_config"]["memory"]["path"] == "/debug/pprof/heap"' "$DEPLOY/parca-scrape.yaml"
check "Alloy's configuration: braces balance, the pprof heap path" \
    python3 -c 'import sys; t = open(sys.argv[1]).read(); assert t.count("{") == t.count("}") and "/debug/pprof/heap" in t' "$DEPLOY/alloy-scrape.alloy"
check "Parca: its targets from the agents' GET /targets (http_sd_configs, with credentials)" \
    python3 -c 'import sys, yaml; c = yaml.safe_load(open(sys.argv[1]))["scrape_configs"][0]; sd = c["http_sd_configs"]; assert sd and all(s["url"].endswith(":9188/targets") and s["basic_auth"]["password_file"] for s in sd) and "static_configs" not in c' "$DEPLOY/parca-scrape.yaml"
check "Alloy: its targets from the agents' GET /targets (discovery.http)" \
    python3 -c 'import re, sys; t = open(sys.argv[1]).read(); urls = re.findall(r"discovery\.http \"\w+\" \{\s*url\s*=\s*\"([^\"]+)\"", t); assert urls and all(u.endswith(":9188/targets") for u in urls) and "targets = array.concat(discovery.http." in t' "$DEPLOY/alloy-scrape.alloy"

# --- the DaemonSet's container, run by podman --------------------------------
mkdir "$WORK/etc"
yq "[d for d in docs if d['kind'] == 'Secret' and d['metadata']['name'] == 'memprof-web-config'][0]['stringData']['web-config.yml']" \
    >"$WORK/etc/web-config.yml"
BUILD_DIR=$(dirname "$MEMPROF")
# Its args, POD_IP being 127.0.0.1 (--network host: the host's loopback),
# on a free port.
PORT=$(free_port)
mapfile -t ARGS < <(yq "'\\n'.join($C['args'])" | sed "s/\$(POD_IP)/127.0.0.1/; s/:9188\$/:$PORT/")
# daemonset [PODMAN-RUN]: the DaemonSet's container, detached through
# container_start, or run to its end with podman run --rm (output in
# $WORK/placeholder.log, status in $RC).
daemonset() {
    local opts=(--pid=host --network host --cap-drop=all --cap-add "$CAPS"
        --security-opt seccomp=unconfined -v "$WORK/etc:/etc/memprof:ro"
        -v "$MEMPROF:/opt/memprof/memprof:ro" -v "$BUILD_DIR/memprof-serve:/opt/memprof/memprof-serve:ro")
    if [ "${1:-}" = run ]; then
        podman run --rm "${CONTAINER_RUN[@]}" "${opts[@]}" memprof-test/bookworm \
            /opt/memprof/memprof "${ARGS[@]}" >"$WORK/placeholder.log" 2>&1
        RC=$?
    else
        container_start bookworm "${opts[@]}" -- /opt/memprof/memprof "${ARGS[@]}"
    fi
}
daemonset run
check "placeholder hash: refused at start with exit 2" [ "$RC" = 2 ]
check "placeholder hash: the message names the file, the line and the fix" \
    file_has "$WORK/placeholder.log" '/etc/memprof/web-config.yml: line 2: .*not a bcrypt hash.*mkpasswd'

PASS=memprof-test-$RANDOM
HASH=$(mkpasswd -m bcrypt -R 10 "$PASS")
sed -i "s|REPLACE-WITH-A-BCRYPT-HASH|'$HASH'|" "$WORK/etc/web-config.yml"
mkdir "$WORK/bin" && cp "$TARGETS/known_heap" "$WORK/bin/"
TARGETS=$WORK/bin CONF=prof:true start_target known_heap
KH=$PID
container_start bookworm -e MALLOC_CONF=prof:true -- "${REDIS_IN_CONTAINER[@]}"
wait_until 20 "redis in $CNAME to answer PING" redis_ping
RD=$CPID
daemonset
SERVE_URL=http://127.0.0.1:$PORT
wait_until 20 "the agent to listen on 127.0.0.1:$PORT" \
    sh -c "curl -s -o /dev/null '$SERVE_URL/' 2>/dev/null"
http GET "/metrics?pid=$KH"
check "without credentials: 401" status_is 401
http GET "/metrics?pid=$KH" -u "prometheus:$PASS"
check "the host process: served" body_has "^memprof_target_up\\{pid=\"$KH\".*\\} 1\$"
http GET "/metrics?pid=$RD" -u "prometheus:$PASS"
check "redis in its container (default seccomp): served" body_has "^memprof_target_up\\{pid=\"$RD\".*\\} 1\$"
check "the host process untouched" untouched "$KH"
check "redis untouched" untouched "$RD"
