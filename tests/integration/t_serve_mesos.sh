# memprof serve's Mesos memory-profiler API, driven with curl as Mesos'
# own script drives it: state, statistics, a run started with Mesos'
# duration syntax and stopped early, one run per process, the downloads
# (raw dump read by jeprof, text, SVG graph) of the latest finished run
# only; a run that ends by itself; the malloc_conf /state gives; a process whose owner turned profiling
# on (409); a glibc process run by memprof's sampler; a process killed in
# the middle of its run; the other endpoints told the process is in a run;
# and the settings put back when the agent ends by SIGTERM or is killed.
. "$SRCDIR/tests/integration/lib.sh"

CONF=prof:true,prof_active:false start_target grow_on_signal
GR=$PID; GR_OUT=$TARGET_OUT
CONF=prof:true start_target known_heap
OWNED=$PID
CONF= start_target glibc_live
GL=$PID
start_serve --allow-control

json_get() {    # json_get EXPR: EXPR of the body's JSON (Python), printed
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' \
        "$WORK/body" "$1" 2>/dev/null
}
json_is() { [ "$(json_get "$1")" = "$2" ]; }
prof_active() { "$MEMPROF" -p "$1" -e 'mallctl prof.active' 2>/dev/null | grep -q "prof.active: $2"; }

http GET "/memory-profiler/state?pid=$GR"
check "state: 200, jemalloc detected" json_is "d['memory_profiler']['jemalloc_detected']" True
check "state: profiling enabled, not active" \
    json_is "(d['jemalloc']['profiling_enabled'], d['jemalloc']['profiling_active'])" "(True, False)"
check "state: malloc_conf.environment is the process's MALLOC_CONF, as Mesos gives it" \
    json_is "(d['jemalloc']['malloc_conf']['environment'], d['jemalloc']['malloc_conf']['environment_variable'])" "('prof:true,prof_active:false', 'MALLOC_CONF')"
check "state: malloc_conf.build_options is jemalloc's config.malloc_conf (Debian's: empty)" \
    json_is "d['jemalloc']['malloc_conf']['build_options']" "$("$MEMPROF" -p "$GR" -e 'mallctl config.malloc_conf' 2>/dev/null | sed -n 's/^config.malloc_conf: *//p' | sed 's/^"\(.*\)"$/\1/')"

# Refusals of the query and the method.
http GET "/memory-profiler/start?pid=$GR&duration=5mins"
check "start by GET: 405 (a change is a POST)" status_is 405
for bad in 600 25hrs 0.5secs 5minutes '1.2.3secs' 'mins'; do
    http POST "/memory-profiler/start?pid=$GR&duration=$bad"
    check "start with duration=$bad: 400 saying why" \
        sh -c "[ $STATUS = 400 ] && grep -q 'duration' '$WORK/body'"
done
http POST "/memory-profiler/start?pid=$GR&duration=5mins&duration=6mins"
check "duration given twice: 400" status_is 400
http GET "/memory-profiler/download/raw?pid=$GR"
check "download before any run: 404 saying so" \
    sh -c "[ $STATUS = 404 ] && grep -q 'no finished profiling run' '$WORK/body'"

# A run, stopped early.
http POST "/memory-profiler/start?pid=$GR&duration=1hrs"
check "start: 200 with the run's id and 3600 s left" \
    json_is "(d['id'] > 0, d['remaining_seconds'])" "(True, 3600.0)"
RUN1=$(json_get "d['id']")
http POST "/memory-profiler/start?pid=$GR&duration=5mins"
check "a second run of the same process: 409 naming the first" \
    sh -c "[ $STATUS = 409 ] && grep -q 'run $RUN1 is under way' '$WORK/body'"
http GET "/memory-profiler/state?pid=$GR"
check "state: the current run and its time left" json_is "d['memory_profiler']['current_run']['id']" "$RUN1"
http GET "/metrics?pid=$GR"
check "metrics meanwhile: 503 naming the run, with Retry-After" \
    sh -c "[ $STATUS = 503 ] && grep -q 'profiling run $RUN1' '$WORK/body' && grep -qi '^Retry-After: [0-9]' '$WORK/headers'"
http GET "/memory-profiler/download/raw?pid=$GR&id=$RUN1"
check "download of the run under way: 409" status_is 409
# Other processes are scraped meanwhile, several at once.
for i in 1 2 3; do
    for p in "$GL" "$OWNED"; do
        curl -s -o /dev/null -w '%{http_code}\n' --max-time 120 "$SERVE_URL/metrics?pid=$p" \
            >>"$WORK/concurrent.codes" &
    done
done
wait_until 120 "six concurrent scrapes" sh -c "[ \$(wc -l <'$WORK/concurrent.codes') = 6 ]"
check "six concurrent scrapes of two other processes during the run: all 200" \
    sh -c "[ \$(grep -c '^200$' '$WORK/concurrent.codes') = 6 ]"
kill -USR1 "$GR"
wait_until 30 "grow_on_signal to grow" grep -q '^grown 64' "$GR_OUT"
http POST "/memory-profiler/stop?pid=$GR"
check "stop: 200 with the download URLs" \
    json_is "d['url_raw_profile']" "/memory-profiler/download/raw?pid=$GR&id=$RUN1"
check "after the run prof.active is false again" prof_active "$GR" false
http GET "/memory-profiler/download/raw?pid=$GR"
check "download/raw: the heap_v2 dump" sh -c "head -c 8 '$WORK/body' | grep -q '^heap_v2/'"
cp "$WORK/body" "$WORK/run1.heap"
jeprof --text "$TARGETS/grow_on_signal" "$WORK/run1.heap" >"$WORK/jeprof.txt" 2>/dev/null
# Sampled every 512 KiB on average: most of the 64 MiB, not all of it.
JE_MAIN=$(awk '$6 == "main" { print $1 }' "$WORK/jeprof.txt")
check "jeprof reads it: main holds most of the 64 MiB grown during the run" \
    awk -v m="$JE_MAIN" 'BEGIN { exit !(m + 0 >= 40) }'
http GET "/memory-profiler/download/text?pid=$GR&id=$RUN1"
check "download/text: memprof's top, main first with jeprof's figure" \
    sh -c "[ $STATUS = 200 ] && sed -n 3p '$WORK/body' | grep -Eq '^ *$JE_MAIN MiB .* main$'"
http GET "/memory-profiler/download/graph?pid=$GR"
check "download/graph: image/svg+xml" header_has '^Content-Type: image/svg\+xml'
check "download/graph: an SVG naming main" sh -c "grep -q '<svg' '$WORK/body' && grep -q '>main<' '$WORK/body'"
http POST "/memory-profiler/stop?pid=$GR"
check "stop without a run: 409" status_is 409

# A run that ends by itself; then only the latest is kept.
http POST "/memory-profiler/start?pid=$GR&duration=1secs"
RUN2=$(json_get "d['id']")
finished() { http GET "/memory-profiler/state?pid=$GR" 2>/dev/null; json_is "d['memory_profiler'].get('last_finished_run')" "$RUN2"; }
wait_until 30 "run $RUN2 to end by itself" finished
check "a run of 1secs ends by itself and becomes the latest" finished
http GET "/memory-profiler/download/raw?pid=$GR&id=$RUN1"
check "the earlier run's files: 404, only the latest is kept" \
    sh -c "[ $STATUS = 404 ] && grep -q 'latest' '$WORK/body'"
check "prof.active false after a run that ended by itself" prof_active "$GR" false

# Profiling its owner turned on: the owner's.
http POST "/memory-profiler/start?pid=$OWNED&duration=5mins"
check "a process started with prof:true (prof_active on): 409, the owner's" \
    sh -c "[ $STATUS = 409 ] && grep -q 'owner turned profiling on' '$WORK/body'"

# Statistics.
http GET "/memory-profiler/statistics?pid=$GR"
check "statistics: jemalloc's JSON with stats.allocated" json_is "d['jemalloc']['stats']['allocated'] > 0" True
http GET "/memory-profiler/statistics?pid=$GL"
check "statistics of a glibc process: 409 pointing to /metrics" \
    sh -c "[ $STATUS = 409 ] && grep -q '/metrics' '$WORK/body'"

# glibc: memprof's sampler does the run.
http POST "/memory-profiler/start?pid=$GL&duration=10mins"
check "glibc process: the run is memprof's sampler's" json_is "d['profiler']" "memprof sampler"
kill -USR1 "$GL"
wait_until 30 "glibc_live's round" grep -q '^round 1 done' "$TARGET_OUT"
http POST "/memory-profiler/stop?pid=$GL"
check "glibc process: stopped" status_is 200
http GET "/memory-profiler/download/text?pid=$GL"
check "glibc process: the text names keep_malloc" grep -q ' keep_malloc$' "$WORK/body"
check "glibc process: the sampler is out" [ "$(got_into_sampler "$GL")" = 0 ]

# A process killed in the middle of its run.
CONF=prof:true,prof_active:false start_target grow_on_signal
VICTIM=$PID
http POST "/memory-profiler/start?pid=$VICTIM&duration=1hrs"
check "a run of a process about to die: started" status_is 200
kill -KILL "$VICTIM"
wait "$VICTIM" 2>/dev/null
vanished() { http GET "/memory-profiler/state?pid=$VICTIM" 2>/dev/null; [ "$STATUS" = 404 ]; }
wait_until 30 "the dead process to be gone" vanished
http POST "/memory-profiler/stop?pid=$VICTIM"
check "stop of a process that died: 404, no such process" status_is 404
http GET "/"
check "the agent goes on serving" status_is 200

# SIGTERM with runs under way: each ends with its settings put back.
in_sampler() { [ "$(got_into_sampler "$GL" 2>/dev/null)" -gt 0 ] 2>/dev/null; }
http POST "/memory-profiler/start?pid=$GR&duration=1hrs"
check "a run of grow_on_signal under way" status_is 200
http POST "/memory-profiler/start?pid=$GL&duration=1hrs"
check "a run of glibc_live under way" status_is 200
check "the sampler is in glibc_live" in_sampler
RUNDIR=$(ls -d "${TMPDIR:-/tmp}"/memprof-serve.* 2>/dev/null | head -1)
kill -TERM "$SERVE_PID"
wait "$SERVE_PID"
RC=$?
check "SIGTERM: the agent exits 0" [ "$RC" = 0 ]
check "SIGTERM: prof.active put back to false" prof_active "$GR" false
check "SIGTERM: the sampler is out" [ "$(got_into_sampler "$GL")" = 0 ]
check "SIGTERM: the agent's run directory is removed" [ ! -e "$RUNDIR" ]

# The agent killed: its run's worker ends the run and puts it all back.
start_serve --allow-control
http POST "/memory-profiler/start?pid=$GR&duration=1hrs"
check "a new agent: a run of grow_on_signal" status_is 200
http POST "/memory-profiler/start?pid=$GL&duration=1hrs"
check "a new agent: a run of glibc_live, the sampler in" in_sampler
kill -KILL "$SERVE_PID"
wait "$SERVE_PID" 2>/dev/null
off() { prof_active "$GR" false; }
wait_until 30 "prof.active false after the agent was killed" off
check "agent killed: prof.active put back by the run's worker" off
out() { [ "$(got_into_sampler "$GL")" = 0 ]; }
wait_until 30 "the sampler out after the agent was killed" out
check "agent killed: the sampler is out" out
check "both processes alive and untraced" sh -c "kill -0 $GR && kill -0 $GL && [ \$(awk '/^TracerPid/ {print \$2}' /proc/$GL/status) = 0 ]"
