# A glibc malloc process (no jemalloc) that freed 400 MiB below a live
# block, which glibc cannot give back on its own: 'info' names glibc,
# 'stats' reads malloc_info() through an in-memory file (never the
# process's own streams) and shows the freed memory held, 'purge' runs
# malloc_trim(0) and most of it comes back, 'memory' reconciles the
# kernel's figures with glibc's; the process keeps running untouched and
# no descriptor of memprof's is left in it.
. "$SRCDIR/tests/integration/lib.sh"

MIB=$((1024 * 1024))
CONF= start_target glibc_fragmented threads 2
freed=$(awk '{for (i = 1; i < NF; i++) if ($i == "freed") s += $(i + 1)} END {print s}' "$TARGET_OUT")
[ "${freed:-0}" -ge $((300 * MIB)) ] || die "the target freed only ${freed:-0} bytes"

mp -p "$PID" -e info -e 'info --json'
check "info: attached" mp_ok
check "info: names glibc malloc and its library" out_has '^allocator +glibc malloc in /.*libc\.so'
check "info: says what works" out_has "stats', 'memory'\) and purge it"
check "info --json: allocator is glibc" [ "$(jf 'd["allocator"]["name"]')" = glibc ]
check "info --json: malloc is glibc's" [ "$(jf 'd["allocator"]["malloc"]')" = glibc ]
check "info --json: heap profiling through memprof's sampler" \
    [ "$(jf 'd["allocator"]["heap_profiling"] and d["allocator"]["sampler"]["possible"]')" = True ]
check "info --json: the sampler is not in before 'prof on'" \
    [ "$(jf 'd["allocator"]["sampler"]["on"]')" = False ]

mp -p "$PID" -e 'stats --json'
check "stats --json: read" mp_ok
check "stats --json: the freed memory is held" [ "$(jf 'd["free_held"]')" -ge $((freed * 9 / 10)) ]
check "stats --json: three arenas (main and two threads')" [ "$(jf 'len(d["arenas"])')" -ge 3 ]
check "stats --json: arenas add up to the total free" \
    [ "$(jf 'sum(a["free_bytes"] for a in d["arenas"]) == d["free_held"]')" = True ]
check "stats --json: in use is the little the process kept" \
    [ "$(jf 'd["in_use"] < 64 * 1024 * 1024')" = True ]
check "stats: malloc_info never went to the process's streams" \
    file_lacks "$WORK/glibc_fragmented.stderr" '<malloc|<heap'
check "stats: nor to its stdout" file_lacks "$TARGET_OUT" '<malloc|<heap'

mp -p "$PID" -e stats
check "stats: per-arena table" out_has '^arena +heap MiB +peak MiB +free MiB'
check "stats: free, held shown" out_has '^free, held +[0-9.]+ MiB'

rss_before=$(awk '/^VmRSS/ {print $2 * 1024}' "/proc/$PID/status")
mp -p "$PID" -e purge -e 'purge --json'
check "purge: ran" mp_ok
check "purge: says malloc_trim released memory" out_has '^malloc_trim\(0\): memory was returned'
check "purge: shows RSS before, after, returned" out_has '^RSS +[0-9.]+ MiB +[0-9.]+ MiB +[0-9.]+ MiB'
check "purge: shows how long the thread was held" out_has 'came back to the system \(thread stopped [0-9]+ us\)'
rss_after=$(awk '/^VmRSS/ {print $2 * 1024}' "/proc/$PID/status")
check "purge: most of the freed memory left the process (kernel's VmRSS)" \
    [ $((rss_before - rss_after)) -ge $((freed * 8 / 10)) ]
check "purge --json: nothing more to give back the second time" \
    [ "$(jf 'd["rss_returned"] < 16 * 1024 * 1024')" = True ]
check "purge --json: the hold time is given" [ "$(jf 'd["pause_us"] > 0')" = True ]

mp -p "$PID" -e memory -e 'memory --json'
check "memory: glibc's heap beside the kernel's figures" out_has '^allocator heap +[0-9.]+ MiB +\(glibc malloc'
check "memory: what is not glibc's" out_has '^anonymous, not the allocator'
check "memory --json: allocator figures" [ "$(jf 'd["allocator"]["name"]')" = glibc ]

mp -p "$PID" -e 'purge 0'
check "purge ARENA: refused for glibc" mp_failed
check "purge ARENA: says why" err_has 'glibc malloc has no purge of one arena'

check "no memfd of memprof's left in the process" \
    bash -c '! ls -l /proc/$1/fd | grep -q "memfd:memprof"' _ "$PID"
check "the process is left running, untraced" untouched "$PID"

# Above 1 GiB of anonymous memory, a trim is announced before it starts:
# it takes each arena's lock in turn, and its time grows with the heap.
CONF= start_target glibc_fragmented threads 7
anon=$(awk '/^RssAnon/ {print $2 * 1024}' "/proc/$PID/status")
[ "$anon" -gt $((1024 * MIB)) ] || die "the target holds only $anon anonymous bytes"
mp -p "$PID" -e purge
check "big heap: purge ran" mp_ok
check "big heap: said first that it may take a while" \
    err_has 'note: malloc_trim\(0\) walks every free chunk of every arena, holding each arena.s lock in turn; with 1\.[0-9] GiB'
check "big heap: the memory came back (RSS over 1 GiB before, under 100 MiB after)" out_has '^RSS +1[0-9]{3}\.[0-9] MiB +[0-9]{1,2}\.[0-9] MiB'
check "big heap: the process is left running, untraced" untouched "$PID"

# When no in-memory file can carry malloc_info's output, 'stats' says so
# and the process is left as it was (no stream opened, nothing written).
MEMPROF_TEST_NO_MEMFD=1 mp -p "$PID" -e stats
check "no memfd: stats refused" mp_failed
check "no memfd: says why" \
    err_has "cannot read glibc malloc's statistics here: malloc_info\(\) writes them to an in-memory file the process makes, and MEMPROF_TEST_NO_MEMFD is set"
check "no memfd: nothing written to the process's streams" \
    file_lacks "$WORK/glibc_fragmented.stderr" '<malloc|<heap'
check "no memfd: the process is left running, untraced" untouched "$PID"
