# Which allocator serves a process, named at attach and in 'info' and
# 'info --json', in every case the loader can make: jemalloc linked in,
# jemalloc or tcmalloc put in front of glibc with LD_PRELOAD (the owner of
# malloc is the first in the loader's order, not whatever maps highest),
# glibc alone, gperftools tcmalloc, mimalloc (statistics refused, with the
# reason), and a renamed jemalloc linked statically beside glibc's malloc
# (Rust's _rjem_), and glibc linked into a static program.  Nothing is
# stopped to tell (a jemalloc session then
# reads profiling's state).
. "$SRCDIR/tests/integration/lib.sh"

named() {         # LABEL KEY MALLOC-KEY OBJECT-RE
    mp -p "$PID" -e 'info --json'
    check "$1: attached" mp_ok
    check "$1: allocator is $2" [ "$(jf 'd["allocator"]["name"]')" = "$2" ]
    check "$1: malloc is $3's" [ "$(jf 'd["allocator"]["malloc"]')" = "$3" ]
    check "$1: malloc's object" bash -c '[[ $1 =~ $2 ]]' _ \
        "$(jf 'd["allocator"]["malloc_object"]')" "$4"
    # (a jemalloc session reads profiling's state at attach: it stops one)
    [ "$2" = jemalloc ] ||
        check "$1: no thread stopped to tell" [ "$(jf 'd["pauses"]["stops"]')" = 0 ]
    check "$1: left untouched" untouched "$PID"
}

start_target plain
named "jemalloc linked" jemalloc jemalloc 'libjemalloc\.so'

CONF= start_target nojemalloc
named "glibc alone" glibc glibc '/libc\.so\.6$'

JEMALLOC_SO=$(ldconfig -p | awk '/libjemalloc\.so\.2 .*x86-64/ {print $NF; exit}')
TCMALLOC_SO=$(ldconfig -p | awk '/libtcmalloc\.so\.4 .*x86-64/ {print $NF; exit}')
LD_PRELOAD=$JEMALLOC_SO start_target nojemalloc
named "jemalloc preloaded" jemalloc jemalloc 'libjemalloc\.so'
CONF= LD_PRELOAD=$TCMALLOC_SO start_target nojemalloc
named "tcmalloc preloaded" tcmalloc tcmalloc 'libtcmalloc\.so'

CONF= start_target tcmalloc_minimal_freed
named "tcmalloc_minimal linked" tcmalloc_minimal tcmalloc_minimal 'libtcmalloc_minimal\.so'

CONF= start_target mimalloc_idle
named "mimalloc" mimalloc mimalloc 'libmimalloc\.so'
mp -p "$PID" -e stats
check "mimalloc: stats refused" mp_failed
check "mimalloc: says why" err_has 'memprof cannot read the statistics of mimalloc: .*mi_stats_print'
mp -p "$PID" -e memory
check "mimalloc: memory works" mp_ok
check "mimalloc: memory says the allocator has no figures" out_has '^allocator +mimalloc: no figures'

_RJEM_MALLOC_CONF=prof:true,prof_active:false CONF= start_target rustprof "$WORK/go.rust"
named "Rust's _rjem_ beside glibc" jemalloc glibc '/libc\.so\.6$'
mp -p "$PID" -e info
check "Rust: the attach line says malloc is glibc's" \
    err_has "its malloc\(\) is glibc malloc in /.*libc\.so\.6: this jemalloc serves only"

# A static program: glibc's malloc in the executable, found without a
# loader.  It holds only the libc functions it uses: no fdopen, so 'stats'
# says so precisely, while 'purge' (malloc_trim) works.
CONF= start_target static_glibc
named "static glibc" glibc glibc "^$TARGETS/static_glibc\$"
check "static glibc: linked in" [ "$(jf 'd["allocator"]["malloc_linked_in"]')" = True ]
mp -p "$PID" -e stats
check "static glibc: stats refused" mp_failed
check "static glibc: says the static program lacks what memprof needs" \
    err_has "has glibc linked into its executable without fdopen, setvbuf or fclose"
mp -p "$PID" -e purge
check "static glibc: purge works" mp_ok
check "static glibc: purge says what malloc_trim did" out_has '^malloc_trim\(0\): '
check "static glibc: left untouched" untouched "$PID"
