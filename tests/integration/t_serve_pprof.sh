# memprof serve's pprof endpoints, read by Debian's go tool pprof from the
# URL: a jemalloc process's heap (GET, nothing changed), gzip profile.proto
# as application/octet-stream with Go's sample types, time set and every
# function named; a glibc process: GET says a profile needs the sampler
# (409, shown by go tool pprof through X-Go-Pprof), POST with
# --allow-control puts it in for the seconds asked, names the functions
# that allocated meanwhile, and takes it out again.
. "$SRCDIR/tests/integration/lib.sh"

CONF=prof:true,lg_prof_sample:10 start_target known_heap
KH=$PID
CONF= start_target glibc_live
GL=$PID
start_serve --allow-control
export HOME=$WORK GOPATH=$WORK/go GOCACHE=$WORK/gocache GOFLAGS=-mod=mod

http GET "/debug/pprof/heap?pid=$KH"
check "GET heap of a jemalloc prof:true process: 200" status_is 200
check "as application/octet-stream" header_has '^Content-Type: application/octet-stream'
check "gzip-compressed" gzip -t "$WORK/body"
cp "$WORK/body" "$WORK/kh.pb.gz"
python3 "$SRCDIR/tests/integration/pprof_json.py" "$SRCDIR" "$WORK/kh.pb.gz" >"$WORK/kh.json"
decoded() {
    zcat "$WORK/kh.pb.gz" | protoc --proto_path="$SRCDIR/lib/profile" \
        --decode=perftools.profiles.Profile "$SRCDIR/lib/profile/pprof.proto" >"$WORK/kh.txt"
}
check "protoc decodes it" decoded
check "time_nanos is set" grep -q '^time_nanos: [1-9]' "$WORK/kh.txt"
check "period 2^10, period type space/bytes" grep -q '^period: 1024$' "$WORK/kh.txt"
check "inuse_objects then inuse_space (Go's order without alloc counts)" \
    sh -c "grep -o '^string_table: \"inuse_[a-z]*\"' '$WORK/kh.txt' | tr '\n' ' ' | grep -q 'inuse_objects.*inuse_space'"

go tool pprof -top "$SERVE_URL/debug/pprof/heap?pid=$KH" >"$WORK/top.txt" 2>"$WORK/top.err"
check "go tool pprof reads the URL: a top naming main, no symbolization asked" \
    sh -c "grep -Eq ' main$' '$WORK/top.txt' && ! grep -qi 'symbol' '$WORK/top.err'"
check "go tool pprof: the type is inuse_space" grep -q '^Type: inuse_space' "$WORK/top.txt"

http GET "/debug/pprof/heap?pid=$GL"
check "GET heap of a glibc process: 409, a profile needs the sampler" status_is 409
check "it says to POST with seconds" body_has 'POST /debug/pprof/heap\?pid=[0-9]+&seconds=N'
check "with X-Go-Pprof, for go tool pprof" header_has '^X-Go-Pprof: 1'
go tool pprof -top "$SERVE_URL/debug/pprof/heap?pid=$GL" >/dev/null 2>"$WORK/go409.err"
check "go tool pprof shows the reason" grep -q 'needs memprof.s sampler' "$WORK/go409.err"

# POST: a run of 3 seconds, with one round of allocations inside it.
http POST "/debug/pprof/heap?pid=$GL&seconds=4" &
POST=$!
in_sampler() { [ "$(got_into_sampler "$GL" 2>/dev/null)" -gt 0 ] 2>/dev/null; }
wait_until 20 "the sampler to be in glibc_live" in_sampler
kill -USR1 "$GL"
wait_until 20 "glibc_live's round" grep -q '^round 1 done' "$TARGET_OUT"
wait "$POST"
check "POST heap run: 200 and a profile" gzip -t "$WORK/body"
cp "$WORK/body" "$WORK/gl.pb.gz"
go tool pprof -top "$WORK/gl.pb.gz" >"$WORK/gltop.txt" 2>&1
# Sampled every 512 KiB on average: keep_malloc's 11 MiB is always seen,
# keep_small's 2 MB is missed about one run in 45; every function holding
# bytes must be one of the round's.
check "the run's profile names keep_malloc" grep -q ' keep_malloc$' "$WORK/gltop.txt"
check "every function holding bytes is one of the round's (keep_*)" \
    awk '$1 ~ /B$/ && $1 != "0" { n++; if ($NF !~ /^keep_/) bad++ } END { exit !(n > 0 && !bad) }' \
    "$WORK/gltop.txt"
check "its duration is the run's" grep -Eq '^Duration: [4-9]' "$WORK/gltop.txt"
check "the sampler is out: no call-table slot points into it" [ "$(got_into_sampler "$GL")" = 0 ]
http POST "/debug/pprof/heap?pid=$GL"
check "POST without seconds: 400" status_is 400
http POST "/debug/pprof/heap?pid=$KH&seconds=1"
check "POST for a jemalloc prof:true process: 409, GET reads its own profiler" status_is 409
check "the targets are alive and untraced" sh -c "kill -0 $KH && kill -0 $GL && [ \$(awk '/^TracerPid/ {print \$2}' /proc/$GL/status) = 0 ]"
