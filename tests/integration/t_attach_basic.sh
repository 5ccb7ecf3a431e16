# Each kind of jemalloc copy is found and controlled: shared libjemalloc,
# LD_PRELOAD into a glibc-malloc program, a static copy renamed
# _rjem_mallctl (PIE) and the same non-PIE.  prof on must really switch
# prof.active (read back), and the target must be left untouched.
. "$SRCDIR/tests/integration/lib.sh"

check_target() {    # KIND WHERE-REGEX
    mp -p "$PID" -e info -e 'prof on' -e 'mallctl prof.active' -e 'prof off' -e 'mallctl prof.active'
    check "$1: the session ran" mp_ok
    check "$1: mallctl found where expected" out_has "$2"
    check "$1: prof on is read back" out_has '^prof.active: true'
    # the last read says false again
    check "$1: prof off sticks" \
        [ "$(grep -E '^prof.active: ' <<<"$OUT" | tail -1 | grep -c false)" = 1 ]
    check "$1: the process is left running, untraced" untouched "$PID"
}

start_target plain
check_target shared 'libjemalloc.so.2'

LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2 start_target nojemalloc
check_target preloaded 'libjemalloc.so.2'

start_target static_rjem
check_target "static PIE" "_rjem_"
start_target static_nopie
check_target "static non-PIE" "_rjem_"
check "no dump directory left" no_dump_dirs
