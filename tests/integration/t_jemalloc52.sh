# jemalloc 5.2.1, as Debian 11 and Ubuntu 20.04/22.04 ship it (bullseye's
# libjemalloc2, fetched once by tools/jemalloc52.sh into /var/tmp; the
# test fails, never skips, when it cannot be had).  small_leak runs with it
# (its libjemalloc.so.2 found first through LD_LIBRARY_PATH), started with
# prof:true,prof_active:false: its threads allocated while profiling was
# off, which in 5.2 leaves them unsampled for good once prof.active goes on
# (issue 34).  So 'prof on' puts memprof's sampler in, said at attach and
# in info; a dump then finds the 32 MiB leaked after it within 15 % (at
# 2^16 bytes: some 500 samples), 'prof off' takes the sampler out and the
# process runs on untouched.  The same through memprof serve's pprof
# endpoint (GET says why a sampler run is needed, POST runs one).  Started
# with profiling active, jemalloc's own profiler serves, and 'prof off'
# says that 5.2 will not sample those threads again; its dump reads the
# small blocks high, as 5.2 samples them too often (info says so).  'profile start
# --peak' and 'recent' (5.3 only) are refused, prof.gdump left as it was
# (it was once left on: dump files in the process's directory).  A 5.2.1
# linked into the program is refused with why.  jemalloc 5.3.0
# (Debian 12's) keeps its own profiler.
. "$SRCDIR/tests/integration/lib.sh"

J52=$(bash "$SRCDIR/tools/jemalloc52.sh") ||
    die "no jemalloc 5.2.1 to test with: tools/jemalloc52.sh failed (its message is above)"
LEAK=33554432   # bytes small_leak leaks at each SIGUSR1

# start52 [CONF]: small_leak on jemalloc 5.2.1, $PID set.
start52() {
    CONF=${1-prof:true,prof_active:false} LD_LIBRARY_PATH=$J52 start_target small_leak
    check "the target runs bullseye's libjemalloc.so.2" grep -q "$J52/libjemalloc.so.2" "/proc/$PID/maps"
}
# leak N: SIGUSR1, then wait until the target has leaked N bytes in all.
leak() {
    kill -USR1 "$PID"
    wait_until 20 "small_leak to have leaked $1 bytes" grep -q "^leaked $1\$" "$TARGET_OUT"
}
send() {
    echo "$1" >&3
    wait_until 20 "the session to answer '$1'" grep -Eq -- "$2" "$WORK/s.out"
}
# near BYTES WANT PERCENT: BYTES within PERCENT of WANT.
near() { awk -v g="${1:-0}" -v w="$2" -v p="$3" 'BEGIN { exit !(g > w * (1 - p / 100) && g < w * (1 + p / 100)) }'; }
flat_of() { jf "sum(r['flat_bytes'] for r in d['rows'] if r['function'] == '$1')"; }

# --- the prompt: prof on, the leak, dump, prof off -------------------------
start52
open_session s
send 'info' "'profile --peak'"
check "attach says why jemalloc 5.2.1's own profiler would sample nothing, and what 'prof on' does instead" \
    file_has "$WORK/s.out" "note: jemalloc 5.2.1's own profiler would sample nothing here if turned on: a thread that allocated while prof.active was false never samples again.*'prof on' puts memprof's heap sampler in instead"
check "info: the version" file_has "$WORK/s.out" '^jemalloc +5\.2\.1-0-g'
check "info: 'prof on' uses memprof's heap sampler, and why" \
    file_has "$WORK/s.out" "^  'prof on' uses +memprof's heap sampler: its jemalloc 5\.2\.1 cannot profile it"
check "info: no 'recent' in 5.2.1" file_has "$WORK/s.out" "^  'recent' +not in jemalloc 5\.2\.1"
check "info: no 'profile --peak' in 5.2.1" file_has "$WORK/s.out" "^  'profile --peak' +not in jemalloc 5\.2\.1 \(prof\.prefix"
send 'prof sample 16' 'sampling every 2\^16 bytes'
send 'prof on' 'profiling is now on'
check "prof on: memprof's sampler is in" file_has "$WORK/s.out" "memprof's sampler is in process $PID"
check "prof on: GOT slots point into the sampler" [ "$(got_into_sampler "$PID")" -ge 1 ]
leak $LEAK
send "dump $WORK/d1.heap" '^dump1: [0-9]+ stacks'
check "the dump holds samples (no empty-dump note)" file_lacks "$WORK/s.out" 'holds no sample|^dump1: 0 stacks'
send 'prof off' 'profiling is now off'
check "prof off: no GOT slot points into the sampler" [ "$(got_into_sampler "$PID")" = 0 ]
close_session
check "the session ended well" [ "$MPRC" = 0 ]
mp "$WORK/d1.heap" -e 'top --json 20'
got=$(flat_of leak_small_blocks)
echo "leak_small_blocks estimated ${got:-none}, truth $LEAK"
check "the leak: leak_small_blocks within 15% of its $LEAK bytes (got ${got:-none})" near "$got" $LEAK 15
check "the process is alive and untouched" untouched "$PID"

# --- memprof serve: GET says why, POST runs the sampler --------------------
start52
start_serve --allow-control
http GET "/debug/pprof/heap?pid=$PID"
check "serve GET: 409, a profile needs memprof's sampler" status_is 409
check "serve GET: it says jemalloc 5.2.1 cannot profile the process" \
    body_has 'its jemalloc 5\.2\.1 cannot profile it from now on'
http POST "/debug/pprof/heap?pid=$PID&seconds=6" &
POST=$!
in_sampler() { [ "$(got_into_sampler "$PID" 2>/dev/null)" -gt 0 ] 2>/dev/null; }
wait_until 20 "the sampler to be in small_leak" in_sampler
leak $LEAK
leak $((2 * LEAK))
wait "$POST"
check "serve POST: 200 and a gzip profile" bash -c 'gzip -t "$1"' _ "$WORK/body"
cp "$WORK/body" "$WORK/serve.pb.gz"
python3 "$SRCDIR/tests/integration/pprof_json.py" "$SRCDIR" "$WORK/serve.pb.gz" >"$WORK/serve.json"
# inuse_space (the second value) of the samples whose innermost frame is
# leak_small_blocks
sgot=$(python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))
print(sum(s["values"][1] for s in p["samples"]
          if s["locations"] and s["locations"][0] and s["locations"][0][0] == "leak_small_blocks"))' \
    "$WORK/serve.json" 2>/dev/null)
echo "serve: leak_small_blocks estimated ${sgot:-none}, truth $((2 * LEAK))"
check "serve: leak_small_blocks within 30% of its $((2 * LEAK)) bytes at 2^19 (got ${sgot:-none})" \
    near "$sgot" $((2 * LEAK)) 30
check "serve: the sampler is out after the run" [ "$(got_into_sampler "$PID")" = 0 ]
check "serve: the process is alive and untouched" untouched "$PID"

# --- profiling active from the start: jemalloc's own, and 'prof off' -----
start52 prof:true,lg_prof_sample:16
leak $LEAK
mp -p "$PID" -e info -e "dump $WORK/own.heap" -e 'prof off --force' -e 'prof on' -e 'prof off'
check "active from the start: the session succeeds" mp_ok
check "active from the start: info says jemalloc's own profiler serves 'prof on'" \
    out_has "^  'prof on' uses +jemalloc's own profiler \(on since the process's start\)"
check "prof off on 5.2.1: says jemalloc's own profiler will not sample the threads again" \
    err_has "warning: in jemalloc 5\.2\.1, a thread that allocated while prof\.active was false never samples again.*a later 'prof on' puts memprof's heap sampler in"
check "prof on after it: memprof's sampler" out_has "memprof's sampler is in process $PID"
check "info says jemalloc 5.2.1's own sizes of small allocations read high" \
    out_has "^  jemalloc's sizes +of small allocations read high: in jemalloc 5\.2\.1"
mp "$WORK/own.heap" -e 'top --json 20'
got=$(flat_of leak_small_blocks)
# 5.2 counts a small allocation that misses its thread cache twice toward
# sampling: its own profile reads small blocks high (+4 to +20 % measured).
check "jemalloc's own dump: leak_small_blocks from 95% to 135% of $LEAK (got ${got:-none})" \
    awk -v g="${got:-0}" -v w=$LEAK 'BEGIN { exit !(g > w * 0.95 && g < w * 1.35) }'
check "active from the start: the process is alive and untouched" untouched "$PID"

# --- what 5.2 lacks is refused before anything changes ---------------------
# (profiling active from the start, so that jemalloc's own profiler serves)
start52 prof:true
mp -p "$PID" -e 'profile start --peak --force'
check "profile start --peak on 5.2.1: refused, saying prof.prefix came with 5.3" \
    err_has 'profile start --peak: this jemalloc \(5\.2\.1\) has no prof\.prefix'
mp -p "$PID" -e 'mallctl prof.gdump' -e recent
check "and prof.gdump is still false (no dump files in the process's directory)" \
    out_has '^prof\.gdump: false$'
check "recent on 5.2.1: refused, saying it needs jemalloc 5.3" err_has 'it needs jemalloc 5\.3 or later'
mp -p "$PID" -e 'stats --json'
check "stats --json on 5.2.1: jemalloc's JSON, stats.allocated in it" \
    [ "$(jf "d['jemalloc']['stats']['allocated'] > 0")" = True ]
check "5.2.1, active from the start: the process is alive and untouched" untouched "$PID"

# --- 5.2.1 linked into the program (as vendored copies are) ----------------
# small_leak with bullseye's libjemalloc_pic.a linked in, its mallctl
# functions renamed _rjem_* as Rust's jemalloc-sys does (the Makefile's
# static_rjem, built here from the fetched archive): no call table for the
# sampler, so 'prof on' is refused with why, before any change.
ld -r --whole-archive "$J52/libjemalloc_pic.a" -o "$WORK/j52.o.tmp" &&
    objcopy $(for f in mallctl mallctlnametomib mallctlbymib malloc_stats_print; do
                  echo "--redefine-sym $f=_rjem_$f"; done) "$WORK/j52.o.tmp" "$WORK/j52.o" &&
    cc -std=gnu11 -D_GNU_SOURCE -O1 -g -pthread -pie -fPIE -I"$SRCDIR/tests/targets" \
        -o "$WORK/small_leak52" "$SRCDIR/tests/targets/small_leak.c" "$WORK/j52.o" \
        -lstdc++ -lpthread -ldl -lm ||
    die "cannot link small_leak with bullseye's libjemalloc_pic.a"
# (renamed after the build, it still reads MALLOC_CONF; memprof, seeing the
# prefix, names _RJEM_MALLOC_CONF as for a real jemalloc-sys build)
MALLOC_CONF=prof:true,prof_active:false "$WORK/small_leak52" >"$WORK/small_leak52.out" \
    2>"$WORK/small_leak52.stderr" &
PID=$!
PIDS+=("$PID")
TARGET_OUT=$WORK/small_leak52.out
wait_until 20 "small_leak52 to print ready" target_ready small_leak52
mp -p "$PID" -e info -e 'prof on'
check "linked in: prof on fails" mp_failed
check "linked in: attach warns that neither jemalloc 5.2.1 nor the sampler can profile it" \
    err_has "warning: jemalloc 5\.2\.1's own profiler would sample nothing here.*memprof's sampler cannot stand in \(this jemalloc is linked into the program"
check "linked in: info says 'prof on' uses nothing without a restart" \
    out_has "^  'prof on' uses +nothing without a restart: in jemalloc 5\.2\.1"
check "linked in: prof on says to restart with _RJEM_MALLOC_CONF=prof:true, nothing changed" \
    err_has "prof on: in jemalloc 5\.2\.1, .*Restart it with _RJEM_MALLOC_CONF=prof:true .*nothing was changed"
mp -p "$PID" -e 'mallctl prof.active'
check "linked in: prof.active is still false" out_has '^prof\.active: false$'
check "linked in: the process is alive and untouched" untouched "$PID"

# --- jemalloc 5.3.0: its own profiler, as before ---------------------------
start_target small_leak
mp -p "$PID" -e info
check "5.3.0: info says jemalloc's own profiler serves 'prof on'" \
    out_has "^  'prof on' uses +jemalloc's own profiler \(prof\.active\)$"
check "5.3.0: 'recent' is there" out_has "^  'recent' +experimental\.prof_recent \(jemalloc 5\.3\.0 and later\)"
check "5.3.0: no note about 5.2 at attach" err_lacks 'would sample nothing'
echo "jemalloc 5.2 ok"
