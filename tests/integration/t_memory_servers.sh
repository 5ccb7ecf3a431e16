# 'memory' on real Debian servers, from outside, as an operator runs it:
#  - memcached (glibc malloc) filled with 20,000 1000-byte values: its slab
#    pages are 1 MiB malloc()s, each a chunk glibc mmapped on its own, which
#    the kernel merges into one mapping; they are the allocator's heap
#    (counted as such, not as "other mmaps"); serve's /metrics says the
#    same; no diagnosis fires on it idle;
#  - PostgreSQL: a backend that scanned a table holds its shared buffers
#    as shared memory, never as heap; no diagnosis fires on it idle;
#  - MariaDB: 30 idle connections' thread stacks found, no diagnosis idle;
#    under inserts a growing heap of a glibc thread arena is named so;
#    after them the arenas' free memory is diagnosed with what 'purge'
#    would return apart from the thread arenas' top chunks it leaves, and
#    a purge returns no more than that;
#  - Apache (mpm_event, 64 threads): after a burst its arenas' small tops
#    are no diagnosis;
# every time the categories add up to rss_bytes exactly and agree with
# smaps_rollup's Rss read just before and after; the servers answer and
# are left untraced.
. "$SRCDIR/tests/integration/lib.sh"

MIB=1048576
rollup_rss() { awk '/^Rss:/ {print $2 * 1024}' "/proc/$1/smaps_rollup"; }
# memory --json on PID, smaps_rollup read just before and after it
# (RSS_BEFORE, RSS_AFTER)
memory_json() {
    RSS_BEFORE=$(rollup_rss "$1")
    mp -p "$1" -e 'memory --json'
    RSS_AFTER=$(rollup_rss "$1")
}
cat_bytes() { jf "sum(c['bytes'] for c in d['categories'] if c['key'] == '$1')"; }
adds_up() { [ "$(jf "sum(c['bytes'] for c in d['categories']) == d['rss_bytes']")" = True ]; }
# rss_bytes between the two rollup reads, give or take 1 MiB
agrees() {
    local r lo hi
    r=$(jf 'd["rss_bytes"]')
    lo=$((RSS_BEFORE < RSS_AFTER ? RSS_BEFORE : RSS_AFTER))
    hi=$((RSS_BEFORE > RSS_AFTER ? RSS_BEFORE : RSS_AFTER))
    echo "  rss_bytes $r, smaps_rollup $RSS_BEFORE then $RSS_AFTER" >&2
    [ "$r" -ge $((lo - MIB)) ] && [ "$r" -le $((hi + MIB)) ]
}
no_diagnosis() { [ "$(jf 'len(d["diagnoses"])')" = 0 ]; }

# --- memcached -----------------------------------------------------------------
MC_PORT=$(free_port)
memcached -u nobody -l 127.0.0.1 -p "$MC_PORT" -m 64 -t 4 >"$WORK/memcached.log" 2>&1 &
MC=$!
PIDS+=("$MC")
mc_fill() {     # N values of 1000 bytes, then asks for the last back
    python3 - "$MC_PORT" "$1" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
v, n = b"x" * 1000, int(sys.argv[2])
for i in range(n):
    s.sendall(b"set k%d 0 0 %d noreply\r\n%s\r\n" % (i, len(v), v))
s.sendall(b"get k%d\r\n" % (n - 1))
buf = b""
while not buf.endswith(b"END\r\n"):
    buf += s.recv(65536)
sys.exit(0 if buf.startswith(b"VALUE k%d 0 1000\r\n" % (n - 1)) else 1)
PY
}
wait_until 10 "memcached to answer" mc_fill 1
check "memcached: 20,000 values stored and read back" mc_fill 20000
memory_json "$MC"
check "memcached: memory --json ran" mp_ok
check "memcached: the categories add up to rss_bytes" adds_up
check "memcached: rss_bytes agrees with smaps_rollup's Rss" agrees
chunks=$(jf 'd["glibc_mmapped_chunks"]')
heap=$(cat_bytes heap) other=$(cat_bytes anon_other)
echo "memcached: heap $heap, anon_other $other, mmapped chunks $chunks" >&2
check "memcached: its slab pages are found as glibc's mmapped chunks ($chunks)" [ "$chunks" -ge 15 ]
check "memcached: they are heap (at least 15 MiB), not other mmaps" \
    bash -c '[ "$1" -ge $((15 * 1048576)) ] && [ "$2" -lt "$1" ]' _ "$heap" "$other"
check "memcached: the heap's line names the chunks" out_has "its [0-9]+ mmapped chunks' mappings"
check "memcached: no diagnosis on it idle" no_diagnosis
start_serve
http GET "/metrics?pid=$MC"
check "memcached: /metrics answers" status_is 200
metric_heap=$(grep -a 'memprof_process_rss_category_bytes{.*category="heap"' "$WORK/body" | awk '{print $NF}')
check "memcached: /metrics counts the chunks in the heap category too" \
    bash -c '[ -n "$1" ] && [ "$1" -ge $((15 * 1048576)) ]' _ "${metric_heap:-}"
check "memcached: still answers" mc_fill 10
check "memcached: left untouched" untouched "$MC"

# --- PostgreSQL -----------------------------------------------------------------
start_postgres
pg_sql "create table t as select g, md5(g::text) m from generate_series(1, 200000) g" >/dev/null
# a backend that scans it, then waits
psql -h "$PGSOCK" -p "$PG_PORT" -U postgres -X -At \
    -c "select count(*) from t where m like '%ab%'" -c "select pg_sleep(300)" >/dev/null 2>&1 &
PIDS+=("$!")
scanner() {
    SCANNER=$(pg_sql "select pid from pg_stat_activity where query like 'select pg_sleep(300)%'")
    [ -n "$SCANNER" ]
}
wait_until 20 "the scanning backend to wait in pg_sleep" scanner
memory_json "$SCANNER"
check "postgres backend: memory --json ran" mp_ok
check "postgres backend: the categories add up to rss_bytes" adds_up
check "postgres backend: rss_bytes agrees with smaps_rollup's Rss" agrees
shared=$(cat_bytes shared) heap=$(cat_bytes heap)
echo "postgres backend: shared $shared, heap $heap" >&2
check "postgres backend: its shared buffers are shared memory (8 MiB at least), not heap" \
    bash -c '[ "$1" -ge $((8 * 1048576)) ] && [ "$2" -lt "$1" ]' _ "$shared" "$heap"
check "postgres backend: no diagnosis on it idle" no_diagnosis
memory_json "$PG_MASTER"
check "postmaster: the categories add up to rss_bytes" adds_up
check "postmaster: no diagnosis on it idle" no_diagnosis
check "postgres: still answers" [ "$(pg_sql 'select 6 * 7')" = 42 ]
check "postgres backend: left untouched" untouched "$SCANNER"
check "postmaster: left untouched" untouched "$PG_MASTER"

# --- MariaDB --------------------------------------------------------------------
# Many threads (a thread per connection, 30 idle in SLEEP), glibc arenas.
M=$WORK/maria
mkdir -p "$M/data" "$M/run" "$M/tmp"
chown -R mysql:mysql "$M"
# its temporary files in a directory of its own (the test's TMPDIR is 0700)
TMPDIR=$M/tmp mariadb-install-db --user=mysql --datadir="$M/data" --auth-root-authentication-method=normal \
    >"$M/install.log" 2>&1 || die "mariadb-install-db failed: $(grep ERROR "$M/install.log" | head -3)"
TMPDIR=$M/tmp mariadbd --user=mysql --datadir="$M/data" --socket="$M/run/sock" --skip-networking \
    --pid-file="$M/run/pid" --log-error="$M/err.log" --innodb-buffer-pool-size=128M \
    >"$M/out" 2>&1 &
MARIA=$!
PIDS+=("$MARIA")
stop_maria() { stop_server "$MARIA" TERM mariadbd; }
CLEANUP_HOOKS+=(stop_maria)
msql() { mariadb -S "$M/run/sock" -uroot "$@"; }
maria_up() {
    msql -e 'select 1' >/dev/null 2>&1 && return 0
    alive "$MARIA" || die "mariadbd exited early: $(tail -5 "$M/err.log")"
    return 1
}
wait_until 60 "mariadbd to answer" maria_up
for i in $(seq 1 30); do
    msql -e 'select sleep(120)' >/dev/null 2>&1 &
    PIDS+=("$!")
done
sleepers() { [ "$(msql -N -e "select count(*) from information_schema.processlist where info like 'select sleep%'")" -ge 30 ]; }
wait_until 20 "30 connections to sleep in mariadbd" sleepers
memory_json "$MARIA"
check "mariadbd: memory --json ran" mp_ok
check "mariadbd: the categories add up to rss_bytes" adds_up
check "mariadbd: rss_bytes agrees with smaps_rollup's Rss" agrees
threads=$(jf 'd["threads"]') with_sp=$(jf 'd["threads_with_sp"]')
echo "mariadbd: $threads threads, $with_sp gave a stack pointer" >&2
found=$(jf "' '.join(c['name'] for c in d['categories'] if c['key'] == 'thread_stacks')")
echo "mariadbd: $found" >&2
check "mariadbd: its threads' stacks are found ($threads threads, 30 connections)" \
    grep -Eq '^thread stacks \(([3-9][0-9]|[1-9][0-9][0-9]) threads found by their stack pointer\)$' <<<"$found"
check "mariadbd: every idle thread gave its stack pointer" [ "$threads" = "$with_sp" ]
check "mariadbd: no diagnosis on it idle" no_diagnosis
# Inserts from 8 connections while 'memory --interval 3' watches: a heap
# of a thread arena that grows is named so, never "the anonymous mapping"
msql -e 'create database d; create table d.t (a int primary key auto_increment, b varchar(200))'
inserter() {
    local i
    for i in 1 2 3 4 5 6; do
        msql d -e "set max_recursive_iterations = 100000; insert into t (b) with recursive c(n) as
                   (select 1 union all select n + 1 from c where n < 20000) select repeat(uuid(), 5) from c" ||
            return 1
    done
}
INSERTERS=()
for i in $(seq 1 8); do inserter & INSERTERS+=("$!"); PIDS+=("$!"); done
rows() { [ "$(msql -N -e 'select count(*) from d.t')" -gt 0 ]; }
wait_until 30 "the inserts to be under way" rows
mp -p "$MARIA" -e 'memory --interval 3 --json'
check "mariadbd: memory --interval 3 ran under inserts" mp_ok
check "mariadbd: the categories add up under load too" adds_up
arena_heap_unnamed() {      # a 64 MiB-aligned mapping of 64 MiB at most called anonymous
    JF_DEFS='import re
def unnamed(c):
    m = re.search(r"the anonymous mapping \((0x[0-9a-f]+)-(0x[0-9a-f]+)\)", c)
    return bool(m) and int(m.group(1), 16) % (64 << 20) == 0 and int(m.group(2), 16) - int(m.group(1), 16) <= 64 << 20' \
        jf 'any(unnamed(g["cause"]) for g in d["diagnoses"])'
}
check "mariadbd: no growing arena heap is called 'the anonymous mapping'" \
    [ "$(arena_heap_unnamed)" = False ]
check "mariadbd: a growing arena heap is named as the thread arena's" \
    out_has 'a growing mapping: a heap of one of glibc malloc.s thread arenas'
for p in "${INSERTERS[@]}"; do wait "$p"; done
# Idle again: the arenas' free memory, and what 'purge' would return of it
# (malloc_trim leaves the thread arenas' top chunks), against what a
# purge then returns.
mp -p "$MARIA" -e 'memory --json'
export JF_DEFS='import re
g = [x for x in d["diagnoses"] if x["key"] == "glibc_arenas_free"]
r = g[0]["remedy"] if g else ""
m = re.search(r"returns at most ([0-9.]+) MiB", r)
bound = float(m.group(1)) if m else -1
tp = re.search(r"([0-9.]+) MiB are the free tops of ([0-9]+) thread arenas", r)'
bound=$(jf 'bound')
tops=$(jf 'tp.group(1) if tp else "none"')
echo "mariadbd: arenas free $(jf 'g[0]["bytes"] if g else 0'), purge bound $bound MiB, thread arenas' tops $tops MiB" >&2
check "mariadbd: the arenas' free memory is diagnosed after the inserts" [ "$(jf 'len(g)')" = 1 ]
check "mariadbd: the remedy sets the thread arenas' tops apart from what purge returns" \
    [ "$tops" != none ]
unset JF_DEFS
mp -p "$MARIA" -e 'purge --json'
returned=$(jf 'd["rss_returned"]')
echo "mariadbd: purge returned $returned bytes" >&2
check "mariadbd: purge returned no more than the diagnosis said it would (+1 MiB)" \
    python3 -c 'import sys; sys.exit(not (int(sys.argv[1]) <= (float(sys.argv[2]) + 1) * 1048576))' \
    "$returned" "$bound"
check "mariadbd: still answers" maria_up
check "mariadbd: left untouched" untouched "$MARIA"

# --- Apache (mpm_event) -----------------------------------------------------------
# 64 threads in its one child, which make glibc arenas as they serve: after
# a burst of requests each arena keeps its small top chunk, which no remedy
# would return, so no diagnosis may fire.
start_apache 64
A=$WORK/apache
wrk -t2 -c32 -d2s "http://127.0.0.1:$APACHE_PORT/index.html" >"$A/wrk.out" 2>&1
check "apache2: wrk's burst was answered" file_has "$A/wrk.out" '^Requests/sec:'
CHILD=$(pgrep -P "$APACHE" | head -1)
memory_json "$CHILD"
check "apache2 child: memory --json ran" mp_ok
check "apache2 child: the categories add up to rss_bytes" adds_up
check "apache2 child: rss_bytes agrees with smaps_rollup's Rss" agrees
echo "apache2 child: $(jf 'd["heap_arenas_count"]') arenas, diagnoses: $(jf '[g["key"] for g in d["diagnoses"]]')" >&2
check "apache2 child: no diagnosis after the burst (its arenas' small tops return nothing)" no_diagnosis
check "apache2: still serves" apache_up
check "apache2 child: left untouched" untouched "$CHILD"
