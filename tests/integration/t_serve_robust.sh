# memprof serve against bad requests and hard moments: a malformed request
# line, headers past the bound, a body, repeated, unknown and overlong
# parameters, a pid that is no number, a method or path it lacks, a
# change without --allow-control, a process another memprof holds (503
# with Retry-After, not a wait), a process dying mid-run, a process the
# rules leave out (every endpoint), a worker past its time limit -- each answered with its 4xx/5xx while the
# agent keeps serving; then SIGTERM in the middle of a sampler run: the
# run ends, the sampler comes out, the agent exits 0.
. "$SRCDIR/tests/integration/lib.sh"

CONF= start_target glibc_live
GL=$PID
GL_OUT=$TARGET_OUT
start_serve --allow-control
PORT=${SERVE_URL##*:}
raw() {     # raw BYTES: what the agent answers on a bare connection (status line)
    python3 - "$PORT" "$1" <<'PY'
import select, socket, sys
# Sent a kilobyte at a time, the answer read as soon as it comes: an agent
# that refuses the request early answers and closes, and more bytes sent
# after that would draw a reset that can throw its answer away unread.
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
req = sys.argv[2].encode().decode("unicode_escape").encode("latin-1")
data = b""
try:
    for i in range(0, len(req), 1024):
        if select.select([s], [], [], 0.05 if i >= 16384 else 0)[0]:
            break
        s.sendall(req[i:i + 1024])
    s.shutdown(socket.SHUT_WR)
except OSError:
    pass
try:
    while chunk := s.recv(4096):
        data += chunk
except OSError:
    pass
print(data.split(b"\r\n", 1)[0].decode("latin-1"))
PY
}
serving() { http GET /; status_is 200; }

ANSWER=$(raw 'GET /metrics HTTP/9.9\r\nHost: x\r\n\r\n')
check "an HTTP version it does not speak: a 505 ($ANSWER)" grep -q ' 505 ' <<<"$ANSWER"
ANSWER=$(raw 'GARBAGE\r\n\r\n')
check "a request line that is no request: closed or a 4xx (${ANSWER:-closed})" \
    grep -Eq '^$|^HTTP/1.[01] 4[0-9][0-9] ' <<<"$ANSWER"
check "still serving" serving
BIG=$(python3 -c 'print("X-Big: " + "a" * 40000)')
ANSWER=$(raw "GET /metrics HTTP/1.1\r\nHost: x\r\n$BIG\r\n\r\n")
check "headers past 16 KiB: a 4xx ($ANSWER)" grep -Eq ' 4[0-9][0-9] ' <<<"$ANSWER"
check "still serving" serving
http POST "/debug/pprof/heap?pid=$GL&seconds=1" --data-binary 'a body'
check "a request body: 413" status_is 413
http GET "/metrics?pid=$GL&pid=$GL"
check "a repeated parameter: 400" status_is 400
http GET "/metrics?pid=$GL&file=/etc/passwd"
check "an unknown parameter: 400, naming what it takes" sh -c "[ $STATUS = 400 ] && grep -q 'it takes: pid' '$WORK/body'"
http GET "/metrics?pid=$(printf '1%.0s' $(seq 40))"
check "an overlong pid: 400" status_is 400
http GET "/metrics?pid=12abc"
check "a pid that is no number: 400" status_is 400
http GET "/metrics?pid=-5"
check "a negative pid: 400" status_is 400
http GET "/metrics?pid=0"
check "pid 0: 400" status_is 400
http GET "/../../etc/passwd"
check "a path outside the table: 404" status_is 404
http PUT "/metrics"
check "a method the endpoint lacks: 405" status_is 405
check "still serving" serving

# Busy: a memprof session holds the process.
open_session holder
wait_until 20 "the holding session to attach" grep -q 'attached to process' "$WORK/holder.out"
http GET "/metrics?pid=$GL"
check "a process another memprof holds: metrics say up 0" body_has "^memprof_target_up\\{pid=\"$GL\".*\\} 0$"
http POST "/debug/pprof/heap?pid=$GL&seconds=1"
check "a process another memprof holds: 503" status_is 503
check "with Retry-After" header_has '^Retry-After: [0-9]+'
check "naming the memprof that holds it" body_has 'already being inspected by memprof'
close_session

# A process that dies in the middle of a sampler run: an error answer,
# and the agent goes on.
CONF= start_target glibc_live
DOOMED=$PID
http POST "/debug/pprof/heap?pid=$DOOMED&seconds=3" &
POST=$!
wait_until 20 "the sampler to be in the doomed process" sh -c "grep -q memprof-sampler /proc/$DOOMED/maps"
kill -9 "$DOOMED"
wait "$POST"
check "a process dying mid-run: a 4xx/5xx answer, not a profile" sh -c "! gzip -t '$WORK/body' 2>/dev/null && [ -s '$WORK/body' ]"
check "still serving" serving

# The rules hold for every endpoint that names a process, pprof's too.
start_serve --allow-control --target "comm=no-such-command"
for ep in "GET /metrics?pid=$GL" "GET /debug/pprof/heap?pid=$GL" "POST /debug/pprof/heap?pid=$GL&seconds=1"; do
    http $ep
    check "a process the rules leave out: ${ep%%\?*} is 403" status_is 403
done
check "the index lists the endpoints, its text escaped for HTML" \
    sh -c "curl -s '$SERVE_URL/' | grep -q 'pid=N&amp;seconds=S'"
kill -TERM "$SERVE_PID"
wait "$SERVE_PID"

# A worker past its time limit (made to stall after its work, the sampler
# still in): 504, the worker killed, the agent serving on; the orphaned
# sampler stops sampling on its own, and the next run removes it.
MEMPROF_TEST_WORKER_STALL=600 start_serve --allow-control --timeout 1
http POST "/debug/pprof/heap?pid=$GL&seconds=1"
check "a worker past its time limit: 504" status_is 504
check "saying it took longer than 2 s" body_has 'took longer than 2 s'
check "still serving" serving
check "glibc_live is alive and untraced" sh -c "kill -0 $GL && [ \$(awk '/^TracerPid/ {print \$2}' /proc/$GL/status) = 0 ]"
# it notices at its next sample: one round of allocations
kill -USR1 "$GL"
wait_until 20 "glibc_live's round" grep -q '^round 1 done' "$GL_OUT"
wait_until 20 "the orphaned sampler to stop sampling on its own" sampler_state_is "$GL" 2
kill -TERM "$SERVE_PID"
wait "$SERVE_PID"
start_serve --allow-control
http POST "/debug/pprof/heap?pid=$GL&seconds=1"
check "the next run over the orphaned sampler: 200" status_is 200
check "after it, no call-table slot points into a sampler" [ "$(got_into_sampler "$GL")" = 0 ]
kill -TERM "$SERVE_PID"
wait "$SERVE_PID"

# A change needs --allow-control.
start_serve
http POST "/debug/pprof/heap?pid=$GL&seconds=1"
check "without --allow-control: POST is 403" status_is 403
kill -TERM "$SERVE_PID"
wait "$SERVE_PID"

# SIGTERM in the middle of a sampler run.
start_serve --allow-control
http POST "/debug/pprof/heap?pid=$GL&seconds=3" &
POST=$!
in_sampler() { [ "$(got_into_sampler "$GL" 2>/dev/null)" -gt 0 ] 2>/dev/null; }
wait_until 20 "the sampler to be in glibc_live" in_sampler
kill -TERM "$SERVE_PID"
wait "$SERVE_PID"
RC=$?
wait "$POST"
check "SIGTERM: the agent exits 0" [ "$RC" = 0 ]
check "SIGTERM: the run under way was answered first, with its profile" gzip -t "$WORK/body"
check "SIGTERM: the sampler is out" [ "$(got_into_sampler "$GL")" = 0 ]
check "SIGTERM: the agent says it ended" grep -q 'ending' "$SERVE_LOG"
check "glibc_live is alive and untraced" sh -c "kill -0 $GL && [ \$(awk '/^TracerPid/ {print \$2}' /proc/$GL/status) = 0 ]"
