# A process whose malloc is served by an allocator memprof does not know
# (a bump allocator LD_PRELOADed): memprof attaches and names the library,
# calls nothing in it, and each command answers precisely: 'stats' and
# 'purge' say memprof does not know its interface, 'prof' that its sampler
# cannot stand in for an unknown allocator and how to restart for a profile, 'memory' gives the kernel's
# figures and says the allocator has none.  The process is left as it was.
. "$SRCDIR/tests/integration/lib.sh"

CONF= LD_PRELOAD="$TARGETS/bump_malloc.so" start_target nojemalloc
mp -p "$PID" -e info -e 'info --json'
check "info: attached" mp_ok
check "info: names the library serving malloc" \
    out_has "^allocator +an allocator memprof does not know in $TARGETS/bump_malloc\.so"
check "info --json: unknown" [ "$(jf 'd["allocator"]["name"]')" = unknown ]
check "info --json: neither stats nor purge" \
    [ "$(jf 'd["allocator"]["stats"] or d["allocator"]["purge"]')" = False ]

MEMPROF_TRACE_PAUSES=1 mp -p "$PID" -e stats
check "stats: refused" mp_failed
check "stats: says why" err_has "memprof cannot read the statistics of an allocator memprof does not know: memprof does not know this allocator's interface"
check "stats: no thread was stopped" err_lacks '^pause '
mp -p "$PID" -e purge
check "purge: refused" mp_failed
check "purge: says why" err_has "memprof cannot purge an allocator memprof does not know"
mp -p "$PID" -e 'prof on'
check "prof: refused" mp_failed
check "prof: names the allocator and the way to jemalloc" \
    err_has "prof: process $PID's malloc\(\) is an allocator memprof does not know, so memprof cannot tell which calls are safe to stand in for\. To profile it, restart it with LD_PRELOAD="
mp -p "$PID" -e memory
check "memory: works" mp_ok
check "memory: the kernel's figures" out_has '^RSS +[0-9.]+ MiB'
check "memory: says the allocator has none" out_has '^allocator +an allocator memprof does not know: no figures'
check "the process is left running, untraced" untouched "$PID"

# No malloc anywhere in a dynamically linked program: its loader might
# still have been about to map a C library, so memprof waited once; then
# it names no known allocator, and does not say the process is loading.
CONF= start_target no_libc
mp -p "$PID" -e info
check "no C library: attached" mp_ok
check "no C library: no malloc found" out_has '^allocator +an allocator memprof does not know \(its malloc is in no symbol table'
check "no C library: not called still loading" err_lacks 'still loading'
check "no C library: left running, untraced" untouched "$PID"
