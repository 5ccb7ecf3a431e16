# Diagnoses of RSS (issue 36 item 2): each cause planted by a target,
# and 'memory' must name it first, with its bytes within 10 % of what the
# target planted (the target says how much: "planted BYTES"), and a remedy
# naming the right action; 'memory --json' gives "diagnoses" sorted by
# bytes, each {cause, key, bytes, remedy}.  thp_sparse: 64 MiB of huge
# pages (madvise MADV_HUGEPAGE) with one byte written per 2 MiB; if the
# kernel gives no huge pages the target exits saying so and the test fails.
# jemalloc_idle_dirty: 64 MiB freed, idle, dirty_decay_ms -1.
# glibc_arenas_freed: 8 arenas with 16 MiB free each.  exited_stacks: 500
# threads ended, their stacks in glibc's cache.  tcmalloc_freed: the
# page heap's free pages.  file_grow: a file mapping
# that grows by 32 MiB between two 'memory' of one session, and during a
# 'memory --interval'.  anon_grow: an anonymous mmap leak of 32 MiB more
# between two 'memory', in one mapping the kernel merged.  (The cgroup
# near its limit: t_memory_cgroup.)  serve's /metrics gives each by cause.
. "$SRCDIR/tests/integration/lib.sh"

export JF_DEFS='
dg = d["diagnoses"]
def first_within(key, planted):
    return dg[0]["key"] == key and abs(dg[0]["bytes"] - planted) * 10 <= planted
def well_formed():
    return all(set(x) == {"cause", "key", "bytes", "remedy"} for x in dg) and \
        all(a["bytes"] >= b["bytes"] for a, b in zip(dg, dg[1:]))
'
# the bytes the target planted: its "planted" line, or $PLANTED
planted() { [ -n "${PLANTED:-}" ] && echo "$PLANTED" || awk '/^planted / { print $2; exit }' "$TARGET_OUT"; }

# diagnosed KEY TEXT REMEDY (no quote in it): memory --json names KEY first within 10 % of
# the planted bytes, its remedy holding REMEDY; memory's text the same
# cause first (its line matching TEXT).
diagnosed() {
    local p
    p=$(planted)
    mp -p "$PID" -e memory
    check "$1: memory names it first" first_diagnosis_has "^ +[0-9.]+ MiB  $2"
    mp -p "$PID" -e 'memory --json'
    check "$1: first, within 10 % of the $p bytes planted" [ "$(jf "first_within('$1', $p)")" = True ]
    check "$1: the remedy says: $3" [ "$(jf "'$3' in dg[0]['remedy']")" = True ]
    check "$1: diagnoses sorted, each cause, key, bytes, remedy" [ "$(jf 'well_formed()')" = True ]
}

CONF= start_target thp_sparse
diagnosed thp_inflation "transparent huge pages: " "MADV_HUGEPAGE"
check "thp_inflation: the remedy gives the bytes it would return" \
    [ "$(jf "'at most' in dg[0]['remedy'] and 'MiB would return' in dg[0]['remedy']")" = True ]
check "thp_sparse untouched" untouched "$PID"

CONF=dirty_decay_ms:-1,muzzy_decay_ms:-1 start_target jemalloc_idle_dirty
diagnosed jemalloc_unpurged "jemalloc keeps [0-9.]+ MiB of freed pages resident" "returns them now (about"
check "jemalloc_unpurged: says background_thread" [ "$(jf "'background_thread:true' in dg[0]['remedy']")" = True ]
check "jemalloc_unpurged: says why jemalloc keeps them" [ "$(jf "'never purges them' in dg[0]['cause']")" = True ]
check "jemalloc_idle_dirty untouched" untouched "$PID"

CONF= start_target glibc_arenas_freed
diagnosed glibc_arenas_free "glibc malloc: 9 arenas hold [0-9.]+ MiB in free chunks" "malloc_trim(0)) returns at most"
check "glibc_arenas_free: the free of each arena (six shown, 16 MiB each)" \
    [ "$(jf 'len(re.findall(r"arena [0-9]+ 1[56][.][0-9] MiB", dg[0]["cause"]))')" = 6 ]
check "glibc_arenas_free: an arena cap to set" [ "$(jf "'MALLOC_ARENA_MAX=' in dg[0]['remedy']")" = True ]
check "glibc_arenas_free: arenas' heaps not taken for exited threads' stacks" \
    [ "$(jf "'exited_thread_stacks' not in [x['key'] for x in dg]")" = True ]
check "glibc_arenas_freed untouched" untouched "$PID"

CONF=dirty_decay_ms:0,muzzy_decay_ms:0 start_target exited_stacks
diagnosed exited_thread_stacks "stacks of exited threads: " "40 MiB of stack address space"
check "exited_thread_stacks: the tunable" [ "$(jf "'glibc.pthread.stack_cache_size' in dg[0]['remedy']")" = True ]
check "exited_stacks untouched" untouched "$PID"

# tcmalloc's page heap: what tcmalloc_freed says it keeps (its own
# reading of tcmalloc.pageheap_free_bytes)
CONF= start_target tcmalloc_freed
PLANTED=$(awk '/^pageheap_free/ { print $2 }' "$TARGET_OUT") \
    diagnosed tcmalloc_pageheap_free "tcmalloc keeps [0-9.]+ MiB of free pages" "ReleaseFreeMemory) returns about"
check "tcmalloc_freed untouched" untouched "$PID"

# grown_between NAME GROWN: a session of the target started last reads
# 'memory', the target grows on SIGUSR1 until it prints "grown GROWN",
# the session reads 'memory --json' again: into OUT.
grown_between() {
    open_session "$1"
    session_cmd "$1" memory '^diagnoses'
    kill -USR1 "$PID"
    wait_until 20 "$1 to print 'grown $2'" grep -Eq "^grown $2( |\$)" "$TARGET_OUT"
    session_cmd "$1" 'memory --json' '"diagnoses"'
    close_session
    OUT=$(sed -n '/^{/,/^}/p' "$WORK/$1.out")
}

# A file mapping that grows between two reads of one session.
start_target file_grow "$WORK/grown.data"
grown_between grow 32
check "growing_mapping: first, within 10 % of the 32 MiB touched" \
    [ "$(jf "first_within('growing_mapping', 32 << 20)")" = True ]
check "growing_mapping: names the file" [ "$(jf "'$WORK/grown.data' in dg[0]['cause']")" = True ]
check "growing_mapping: the remedy says munmap" [ "$(jf "'munmap' in dg[0]['remedy']")" = True ]
check "file_grow untouched" untouched "$PID"

# An anonymous mmap leak: one mapping the kernel grows downwards by merging
# each new mmap into it (16 MiB already in it at the first read).
start_target anon_grow
grown_between anon 48
check "growing_mapping (anonymous, merged): first, within 10 % of the 32 MiB mapped" \
    [ "$(jf "first_within('growing_mapping', 32 << 20)")" = True ]
check "growing_mapping (anonymous): says so" [ "$(jf "'the anonymous mapping' in dg[0]['cause']")" = True ]
check "growing_mapping (anonymous): the remedy names faults and prof on" \
    [ "$(jf "'faults SECONDS' in dg[0]['remedy'] and 'prof on' in dg[0]['remedy']")" = True ]
check "anon_grow untouched" untouched "$PID"

# The same over --interval: memprof reads smaps, sleeps (in
# clock_nanosleep: then the file grows), reads it again.
start_target file_grow "$WORK/grown2.data"
"$MEMPROF" -p "$PID" -e 'memory --interval 10 --json' >"$WORK/interval.out" 2>"$WORK/interval.err" &
MP=$!
PIDS+=("$MP")
sleeping() { [ "$(cut -d' ' -f1 "/proc/$MP/syscall" 2>/dev/null)" = 230 ]; }
wait_until 30 "memprof to sleep its interval" sleeping
kill -USR1 "$PID"
wait_until 20 "file_grow to touch 32 MiB" grep -q '^grown 32' "$TARGET_OUT"
wait "$MP"
check "memory --interval ran" [ $? -eq 0 ]
OUT=$(cat "$WORK/interval.out")
check "growing_mapping over --interval: first, within 10 % of the 32 MiB" \
    [ "$(jf "first_within('growing_mapping', 32 << 20)")" = True ]
check "growing_mapping over --interval: the file, grown in about 10 s" \
    [ "$(jf "'$WORK/grown2.data' in dg[0]['cause'] and bool(re.search(r' in [0-9.]+ s', dg[0]['cause'])) and float(re.search(r' in ([0-9.]+) s', dg[0]['cause']).group(1)) >= 10")" = True ]

# serve's /metrics: the same diagnoses by cause
CONF=dirty_decay_ms:-1,muzzy_decay_ms:-1 start_target jemalloc_idle_dirty
start_serve --target "exe=$TARGETS/jemalloc_idle_dirty"
http GET "/metrics?pid=$PID"
check "/metrics: 200" status_is 200
check "/metrics: the diagnosis by cause, within 10 % of the planted bytes" \
    awk -v pid="$PID" -v p="$(planted)" 'index($1, "memprof_process_memory_diagnosis_bytes{pid=\"" pid "\"") == 1 && $1 ~ /cause="jemalloc_unpurged"/ { v = $2 } END { exit !(v != "" && (v - p) * 10 <= p && (p - v) * 10 <= p) }' "$WORK/body"
