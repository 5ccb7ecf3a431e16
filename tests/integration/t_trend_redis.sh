#!/usr/bin/env bash
# A profiling run on Debian's redis-server while redis-benchmark adds keys
# steadily (SET of random keys over a keyspace of 10^8, so nearly every SET
# adds one): 'profile start --duration 20s --every 2s' completes with ten
# dumps and redis's profiling put back; trend's call sites name redis's key-storing
# path (dictAddRaw < dbAdd < setKey, the key and value strings made by
# _sdsnewlen / createStringObject) among its top rows, steadily growing;
# with redis's zmalloc wrappers hidden, its functions do too.  0 benchmark
# errors; redis answers and is left untraced.
. "$SRCDIR/tests/integration/lib.sh"

start_redis
pongs() { redis-cli -p "$port" ping 2>/dev/null | grep -q PONG; }
keys_above() { [ "$(redis-cli -p "$port" dbsize 2>/dev/null || echo 0)" -gt "$1" ]; }
redis-benchmark -p "$port" -q -t set -r 100000000 -d 100 -c 2 -n 100000000 -l \
    >"$WORK/bench.out" 2>&1 &
BENCH=$!
PIDS+=("$BENCH")
wait_until 10 "the benchmark to add keys" keys_above 1000

{
    echo "profile start --duration 20s --every 2s"
    echo "profile wait"
    echo "profile"
    echo "mallctl prof.active"
    echo "trend 4"
    echo "trend 4 --hide '^(z(try)?(malloc|calloc|realloc)(_usable)?|_?zmalloc.*)\$' --json"
} >"$WORK/run.mp"
mp -q -p "$PID" -x "$WORK/run.mp"
check "the run and the trends ran" mp_ok
check "the run completed with ten dumps" out_has '^  dumps every 2\.0 s: 10 taken'
check "redis's profiling is off again after the run" out_has '^prof.active: false'
text=$(awk '/^Trend of/ { n++ } n == 1' <<<"$OUT")
sites=$(awk '/call site \(innermost first\)$/ { on = 1; next } on' <<<"$text")
echo "top call sites:"; echo "$sites"
check "trend: a top call site is dictAddRaw < dbAdd < setKey (the key's entry)" \
    grep -Eq 'dictAddRaw < dbAdd < setKey' <<<"$sites"
check "trend: a top call site makes the strings (_sdsnewlen or createStringObject)" \
    grep -Eq '(_sdsnewlen|createStringObject) < ' <<<"$sites"
check "trend: the first call site grows steadily (mono >= 90%)" \
    grep -Eq '^ +\+[0-9.]+ [KMG]iB/h +(9[0-9]|100)% ' <<<"$(head -1 <<<"$sites")"
check "trend: the total grew" grep -Eq '^Total in use: .*, \+[0-9.]+ [KMG]iB/h' <<<"$text"
export JF_DEFS='f = [r["function"] for r in d["functions"]]'
echo "functions without the zmalloc wrappers: $(jf f)"
check "trend --hide zmalloc --json: the key-storing functions lead" \
    [ "$(jf 'bool({"dictAddRaw", "_sdsnewlen", "createStringObject", "createObject"} & set(f[:3]))')" = True ]
check "trend --json: the first function is steady" [ "$(jf 'd["functions"][0]["steady"]')" = True ]

check "the benchmark outlived the session" alive "$BENCH"
kill "$BENCH"; wait "$BENCH" 2>/dev/null
check "no benchmark errors" file_lacks "$WORK/bench.out" '[Ee][Rr][Rr][Oo][Rr]'
check "redis still answers PING" pongs
check "redis is left running, untraced" untouched "$PID"
check "no dump directory left" no_dump_dirs
