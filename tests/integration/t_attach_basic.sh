# Each kind of jemalloc copy is found and controlled: shared libjemalloc,
# LD_PRELOAD into a glibc-malloc program, a static copy renamed
# _rjem_mallctl (PIE) and the same non-PIE.  prof on must really switch
# prof.active (read back), and the target must be left untouched.
. "$SRCDIR/tests/integration/lib.sh"

check_target() {
    mp -p "$PID" -e info -e 'prof on' -e 'mallctl prof.active' -e 'prof off' -e 'mallctl prof.active'
    assert_ok
    assert_out "$1"
    assert_out '^prof.active: true'
    # the last read says false again
    [ "$(grep -E '^prof.active: ' <<<"$OUT" | tail -1 | grep -c false)" = 1 ] || die "prof off did not stick"
    assert_untouched "$PID"
}

start_target plain
check_target 'libjemalloc.so.2'

LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2 start_target nojemalloc
check_target 'libjemalloc.so.2'

start_target static_rjem
check_target "_rjem_"
start_target static_nopie
check_target "_rjem_"
assert_no_dump_dirs
