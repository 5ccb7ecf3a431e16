#!/usr/bin/env bash
# Debug files fetched by build-id from a real debuginfod server (Debian's
# debuginfod, serving a directory on loopback): a dump of a stripped
# alloc_sites comes out with its function names through it, from an empty
# cache; without the server the frames stay addresses and memprof says
# why; a server that answers with another build's file is not believed;
# a server that never answers costs one bounded wait (DEBUGINFOD_TIMEOUT),
# not one per object; and memprof attaches to a stripped executable with
# its own static jemalloc through the server alone.
. "$SRCDIR/tests/integration/lib.sh"

# the server answers 200 for this build-id's debug file
serves() { debuginfod_serves "$1" "$2" debuginfo; }

mkdir -p "$WORK/srv" "$WORK/stripped" "$WORK/dumps"
cp "$TARGETS/alloc_sites" "$WORK/stripped/alloc_sites"
strip -s "$WORK/stripped/alloc_sites"
objcopy --only-keep-debug "$TARGETS/alloc_sites" "$WORK/srv/alloc_sites.debug"
cp "$TARGETS/static_rjem" "$WORK/stripped/static_rjem"
strip -s "$WORK/stripped/static_rjem"
objcopy --only-keep-debug "$TARGETS/static_rjem" "$WORK/srv/static_rjem.debug"
ID=$(build_id "$WORK/stripped/alloc_sites")
RJEM_ID=$(build_id "$WORK/stripped/static_rjem")
[ -n "$ID" ] && [ -n "$RJEM_ID" ] || die "the targets have no build-id"

MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:10 "$WORK/stripped/alloc_sites" \
    "$WORK/dumps" >/dev/null || die "alloc_sites failed"
B=$WORK/dumps/b.heap

# ---- no server configured: addresses, as before ----
unset DEBUGINFOD_URLS
mp "$B" -e 'top 5'
check "no DEBUGINFOD_URLS: frames stay addresses" grep -q 'alloc_sites+0x' <<<"$OUT"

# ---- the server ----
PORT=$(free_port)
debuginfod -F -p "$PORT" -d "$WORK/debuginfod.sqlite" -t 0 -g 0 "$WORK/srv" \
    >"$WORK/debuginfod.log" 2>&1 &
SERVER=$!
PIDS+=("$SERVER")
wait_until 60 "debuginfod serving alloc_sites' debug file" serves "$PORT" "$ID"
wait_until 60 "debuginfod serving static_rjem's debug file" serves "$PORT" "$RJEM_ID"

export DEBUGINFOD_URLS="http://127.0.0.1:$PORT"
export DEBUGINFOD_CACHE_PATH=$WORK/cache
mp "$B" -e 'top 5'
check "through debuginfod: top runs" [ "$RC" -eq 0 ]
for f in leak_big leak_small thread_alloc recurse_alloc; do
    check "through debuginfod: top names $f" grep -Eq "%  $f\$" <<<"$OUT"
done
check "through debuginfod: no raw address of the executable" \
    bash -c '! grep -q "alloc_sites+0x" <<<"$1"' _ "$OUT"
check "through debuginfod: the file is in the cache" \
    test -s "$WORK/cache/$ID/debuginfo"
check "through debuginfod: a library the server lacks is named in a warning" \
    grep -q "has no debug file for build-id" <<<"$ERR"

# the cache serves the next reading (the server's log counts requests)
requests() { grep -c "GET /buildid/$ID/debuginfo 200" "$WORK/debuginfod.log"; }
before=$(requests)
check "through debuginfod: the server's log shows memprof's download" [ "$before" -ge 2 ]
mp "$B" -e 'top 5'
check "from the cache: names leak_big" grep -Eq '%  leak_big$' <<<"$OUT"
check "from the cache: the server was not asked again" [ "$(requests)" -eq "$before" ]

# ---- attach: a stripped static jemalloc found through debuginfod ----
export CONF=prof:true,prof_active:false,lg_prof_sample:0
TARGETS=$WORK/stripped start_target static_rjem
RJEM=$PID
mp -p "$RJEM" -e 'prof on'
check "attach through debuginfod: prof on" [ "$RC" -eq 0 ]
check "attach through debuginfod: symbols from the cache" \
    grep -q "symbols from $WORK/cache/$RJEM_ID/debuginfo" <<<"$ERR"
top_shows_churn() {
    mp -p "$RJEM" -e dump -e 'top 20'
    [ "$RC" -eq 0 ] && grep -q churn <<<"$OUT"
}
wait_until 30 "top naming static_rjem's functions" top_shows_churn
check "attach through debuginfod: top names the program's function" grep -q churn <<<"$OUT"
mp -p "$RJEM" -e 'prof off'
check "attach through debuginfod: prof off" [ "$RC" -eq 0 ]
assert_untouched "$RJEM"

# ---- the server stopped: addresses and a message, quickly ----
kill "$SERVER"
wait "$SERVER" 2>/dev/null
export DEBUGINFOD_CACHE_PATH=$WORK/cache-empty
mp "$B" -e 'top 5'
check "server gone: top still runs" [ "$RC" -eq 0 ]
check "server gone: frames stay addresses" grep -q 'alloc_sites+0x' <<<"$OUT"
check "server gone: says debuginfod did not deliver" \
    grep -q "debuginfod (http://127.0.0.1:$PORT) did not deliver build-id" <<<"$ERR"
mp -p "$RJEM" -e info
check "server gone: attach refused" [ "$RC" -ne 0 ]
check "server gone: the refusal says what debuginfod did" \
    grep -q "debuginfod (http://127.0.0.1:$PORT) did not deliver build-id $RJEM_ID" <<<"$ERR"
assert_untouched "$RJEM"

# ---- a server that answers with another build's file is not believed ----
WRONG_PORT=$(free_port)
objcopy --only-keep-debug "$TARGETS/plain" "$WORK/wrong.debug"
python3 - "$WRONG_PORT" "$WORK/wrong.debug" >"$WORK/wrong.log" 2>&1 <<'PY' &
import http.server, sys
body = open(sys.argv[2], "rb").read()
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
PY
LIAR=$!
PIDS+=("$LIAR")
wait_until 30 "the lying server answering" serves "$WRONG_PORT" "$ID"
export DEBUGINFOD_URLS="http://127.0.0.1:$WRONG_PORT"
export DEBUGINFOD_CACHE_PATH=$WORK/cache-wrong
mp "$B" -e 'top 5'
check "another build's file: frames stay addresses" grep -q 'alloc_sites+0x' <<<"$OUT"
check "another build's file: warned as not matching" \
    grep -q "cache-wrong/$ID/debuginfo does not match $WORK/stripped/alloc_sites" <<<"$ERR"
kill "$LIAR"
wait "$LIAR" 2>/dev/null

# ---- a server that accepts and never answers: one bounded wait, once ----
MUTE_PORT=$(free_port)
python3 - "$MUTE_PORT" >"$WORK/mute.log" 2>&1 <<'PY' &
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(16)
print("listening", flush=True)
held = []
while True:
    held.append(s.accept()[0])
PY
MUTE=$!
PIDS+=("$MUTE")
wait_until 30 "the mute server listening" grep -q listening "$WORK/mute.log"
export DEBUGINFOD_URLS="http://127.0.0.1:$MUTE_PORT"
export DEBUGINFOD_CACHE_PATH=$WORK/cache-mute
DEBUGINFOD_TIMEOUT=1 mp "$B" -e 'top 5'
check "mute server: top still runs" [ "$RC" -eq 0 ]
check "mute server: says the first object was not delivered" \
    grep -q "debuginfod (http://127.0.0.1:$MUTE_PORT) did not deliver build-id" <<<"$ERR"
check "mute server: not asked again for the other objects" \
    grep -q "was not asked again after it failed on an earlier object" <<<"$ERR"
check "mute server: only one object waited for" \
    bash -c '[ "$(grep -c "did not deliver" <<<"$1")" -eq 1 ]' _ "$ERR"
kill "$MUTE" "$RJEM"
wait "$MUTE" 2>/dev/null || true
