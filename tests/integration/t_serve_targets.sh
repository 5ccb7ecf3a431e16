# GET /targets: memprof serve's processes as Prometheus HTTP service
# discovery (http_sd_configs; Alloy's discovery.http), one target group per
# process the --target rules allow, each naming this agent as the client
# reached it (the Host header), labelled as /metrics labels its series,
# with __metrics_path__ and __param_pid so that each target is one
# process.  Behind --web-config basic auth as every endpoint.  Debian's
# prometheus, configured with http_sd_configs at the agent (basic_auth for
# both the discovery and the scrapes), discovers exactly the processes
# served with their labels: pprof heap targets (checked in its
# /api/v1/targets: the scrape URL is /debug/pprof/heap?pid=N) and, with
# ?endpoint=metrics, per-process /metrics targets that it scrapes (up ==
# 1 for each, their series labelled with their pid).  A process that
# exits leaves the list at the next refresh.
. "$SRCDIR/tests/integration/lib.sh"

HASH=$(mkpasswd -m bcrypt -R 10 -s <<<'scrape-pass') || die "mkpasswd -m bcrypt failed (package whois)"
printf 'basic_auth_users:\n  prom: %s\n' "$HASH" >"$WORK/web.yml"

CONF=prof:true,prof_active:false start_target grow_on_signal
P1=$PID
CONF=prof:true,prof_active:false start_target grow_on_signal
P2=$PID
# A process the rules leave out.
start_target light_alloc
OUTSIDE=$PID
start_serve --web-config "$WORK/web.yml" --target "name=grow,exe=$TARGETS/grow_on_signal"
HOSTPORT=${SERVE_URL#http://}

http GET /targets
check "no credentials: 401" status_is 401
http GET /targets -u prom:scrape-pass
check "with credentials: 200" status_is 200
check "served as JSON" header_has '^Content-Type: application/json'
# sd_check FILE PIDS PATH: FILE is a target group list of exactly PIDS, each
# at this agent, labelled as /metrics with name=grow, scraped at PATH.
sd_check() {
    python3 - "$@" "$HOSTPORT" "$TARGETS/grow_on_signal" <<'PY'
import json, sys
doc, pids, path, hostport, exe = sys.argv[1], sys.argv[2].split(), sys.argv[3], sys.argv[4], sys.argv[5]
groups = json.load(open(doc))
got = sorted(g["labels"]["pid"] for g in groups)
if got != sorted(pids):
    sys.exit(f"pids {got}, want {sorted(pids)}")
for g in groups:
    l = g["labels"]
    want = {"__metrics_path__": path, "__param_pid": l["pid"], "comm": "grow_on_signal",
            "name": "grow"}
    bad = {k: l.get(k) for k, v in want.items() if l.get(k) != v}
    if g["targets"] != [hostport] or bad or any(k.startswith("container") for k in l):
        sys.exit(f"group {g}: {bad}")
PY
}
check "one group per process served, none for the one left out" \
    sd_check "$WORK/body" "$P1 $P2" /debug/pprof/heap
check "the process left out is not listed" holds eval '! grep -q "\"$OUTSIDE\"" "$WORK/body"'
http GET "/targets?endpoint=allocs" -u prom:scrape-pass
check "?endpoint=allocs: scraped at /debug/pprof/allocs" sd_check "$WORK/body" "$P1 $P2" /debug/pprof/allocs
http GET "/targets?endpoint=metrics" -u prom:scrape-pass
check "?endpoint=metrics: scraped at /metrics" sd_check "$WORK/body" "$P1 $P2" /metrics
http GET "/targets?endpoint=cpu" -u prom:scrape-pass
check "an unknown endpoint: 400 naming the three" \
    holds eval 'status_is 400 && body_has "endpoint must be given once, as heap, allocs or metrics"'
http GET "/targets?pid=$P1" -u prom:scrape-pass
check "?pid: 400 (the list is every process served)" status_is 400
http GET /targets -u prom:scrape-pass -H 'Host: user@evil/x'
check "a Host that is no address: 400 saying why" \
    holds eval 'status_is 400 && body_has "by the Host header the client reached it with"'
http GET /targets -u prom:scrape-pass -H 'Host: memprof-0.node-a:9188'
check "a DNS name and port as Host: the targets name it" \
    holds eval 'status_is 200 && body_has "\"targets\":\\[\"memprof-0.node-a:9188\"\\]"'

cat >"$WORK/prometheus.yml" <<YML
global: {scrape_interval: 1s, scrape_timeout: 1s}
scrape_configs:
  - job_name: memprof-heap
    basic_auth: {username: prom, password: scrape-pass}
    http_sd_configs:
      - url: 'http://$HOSTPORT/targets'
        refresh_interval: 1s
        basic_auth: {username: prom, password: scrape-pass}
  - job_name: memprof-process
    honor_labels: true
    basic_auth: {username: prom, password: scrape-pass}
    http_sd_configs:
      - url: 'http://$HOSTPORT/targets?endpoint=metrics'
        refresh_interval: 1s
        basic_auth: {username: prom, password: scrape-pass}
YML
start_prometheus
# prom_targets JOB PIDS PATH: prometheus's active targets of JOB are exactly
# PIDS, each scraped at this agent's PATH?pid=N, labelled pid and name.
prom_targets() {
    curl -s --max-time 5 "http://127.0.0.1:$PROM_PORT/api/v1/targets?state=active" \
        >"$WORK/t.json" 2>/dev/null || return 1
    python3 - "$WORK/t.json" "$@" "$HOSTPORT" <<'PY'
import json, sys
doc, job, pids, path, hostport = sys.argv[1], sys.argv[2], sys.argv[3].split(), sys.argv[4], sys.argv[5]
ts = [t for t in json.load(open(doc))["data"]["activeTargets"] if t["labels"]["job"] == job]
got = sorted(t["labels"].get("pid", "") for t in ts)
ok = got == sorted(pids) and all(
    t["scrapeUrl"] == f"http://{hostport}{path}?pid={t['labels']['pid']}" and
    t["labels"].get("name") == "grow" and t["labels"].get("comm") == "grow_on_signal" and
    t["labels"]["instance"] == hostport for t in ts)
sys.exit(0 if ok else f"{job}: {[(t['labels'], t['scrapeUrl']) for t in ts]}")
PY
}
wait_until 60 "prometheus to discover the heap targets" prom_targets memprof-heap "$P1 $P2" /debug/pprof/heap
check "prometheus discovered one pprof heap target per process, with its labels" \
    prom_targets memprof-heap "$P1 $P2" /debug/pprof/heap
check "prometheus discovered one /metrics target per process" \
    prom_targets memprof-process "$P1 $P2" /metrics
wait_until 60 "prometheus to scrape both processes' /metrics" \
    eval '[ "$(prom_query "up{job=\"memprof-process\"} == 1" && python3 -c "import json; print(len(json.load(open(\"$WORK/q.json\"))[\"data\"][\"result\"]))" "$WORK/q.json")" = 2 ]'
check "each per-process target scraped: up == 1 for both" \
    prom_query "up{job=\"memprof-process\",pid=\"$P1\"} == 1 and on() up{job=\"memprof-process\",pid=\"$P2\"} == 1"
check "the scraped series are that process's" \
    prom_query "memprof_process_resident_bytes{job=\"memprof-process\",pid=\"$P2\",name=\"grow\"}"
kill "$P2"
wait_until 30 "prometheus to drop the target of the process that exited" \
    prom_targets memprof-heap "$P1" /debug/pprof/heap
check "a process that exited leaves the discovered targets" prom_targets memprof-heap "$P1" /debug/pprof/heap
check "the agent is alive" alive "$SERVE_PID"
echo "serve targets ok"
