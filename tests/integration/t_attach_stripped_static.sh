# jemalloc linked into an executable that was then stripped (strip -s), as
# Rust release builds and static C services ship: memprof finds mallctl
# through the build-id debug file (under --debug-dir), through a
# .gnu_debuglink beside the executable, or through --exe naming the
# unstripped copy, and then profiles the program under its own names.
# With none of them it says the executable holds a stripped jemalloc and
# which debug file would fix it, never "start it with LD_PRELOAD" (a
# program with its own jemalloc never calls the preloaded one).  Debug
# files of another build, a --exe of another build, and a debuglink file
# that is a symlink or a FIFO in the target's directory are not used.
. "$SRCDIR/tests/integration/lib.sh"

build_id() { readelf -n "$1" | awk '/Build ID:/ {print $3}'; }

# the variant's build products in $WORK/$variant/
make_variants() {
    local v=$1 d=$WORK/$1
    mkdir -p "$d/plain" "$d/linked" "$d/symlinked" "$d/fifo" "$d/debugroot" "$d/wrongroot"
    cp "$TARGETS/$v" "$d/full"
    cp "$d/full" "$d/plain/$v" && strip -s "$d/plain/$v"
    local id
    id=$(build_id "$d/plain/$v")
    [ -n "$id" ] || die "$v has no build-id"
    mkdir -p "$d/debugroot/.build-id/${id:0:2}" "$d/wrongroot/.build-id/${id:0:2}"
    objcopy --only-keep-debug "$d/full" "$d/debugroot/.build-id/${id:0:2}/${id:2}.debug"
    # a debug file of another build where this build's belongs
    objcopy --only-keep-debug "$TARGETS/alloc_sites" "$d/wrongroot/.build-id/${id:0:2}/${id:2}.debug"
    objcopy --only-keep-debug "$d/full" "$d/linked/$v.debug"
    cp "$d/plain/$v" "$d/linked/$v"
    (cd "$d/linked" && objcopy --add-gnu-debuglink="$v.debug" "$v")
    # the same debuglink, but its file a symlink to the good one
    cp "$d/linked/$v" "$d/symlinked/$v"
    ln -s "$d/linked/$v.debug" "$d/symlinked/$v.debug"
    # ... or a FIFO, which must not be opened (a read would never end)
    cp "$d/linked/$v" "$d/fifo/$v"
    mkfifo "$d/fifo/$v.debug"
    ID=$id
}

# prof on in one session, then later sessions dump until the churning
# worker's function appears in top (sampling every allocation)
top_shows_program() {
    mp -p "$PID" "$@" -e dump -e 'top 20'
    [ "$RC" -eq 0 ] && grep -q 'churn' <<<"$OUT"
}

profiles() {
    local what=$1; shift
    mp -p "$PID" "$@" -e 'prof on'
    check "$what: attaches" [ "$RC" -eq 0 ]
    check "$what: says where the symbols came from" grep -q "symbols from $SYMBOLS" <<<"$ERR"   # the attach line: stderr
    wait_until 30 "$what: top naming the program's functions" top_shows_program "$@"
    check "$what: top names the program's function" grep -q churn <<<"$OUT"
    mp -p "$PID" "$@" -e 'prof off'
    check "$what: prof off" [ "$RC" -eq 0 ]
    assert_untouched "$PID"
}

export CONF=prof:true,prof_active:false,lg_prof_sample:0
for v in static_rjem static_nopie; do
    make_variants "$v"
    d=$WORK/$v

    TARGETS=$d/plain start_target "$v"
    # nothing to go by: the right diagnosis, and no LD_PRELOAD advice
    mp -p "$PID" -e info
    check "$v stripped: refused" [ "$RC" -ne 0 ]
    check "$v stripped: names the executable" grep -q "$d/plain/$v" <<<"$ERR"
    check "$v stripped: says it carries a stripped jemalloc" \
        grep -q "carries its own copy of jemalloc, stripped of its symbols" <<<"$ERR"
    check "$v stripped: names the build-id debug file" \
        grep -qF "/usr/lib/debug/.build-id/${ID:0:2}/${ID:2}.debug" <<<"$ERR"
    check "$v stripped: mentions --exe" grep -q -- "--exe" <<<"$ERR"
    check "$v stripped: no LD_PRELOAD advice" bash -c '! grep -q LD_PRELOAD <<<"$1"' _ "$ERR"
    check "$v stripped: no 'does not use jemalloc'" bash -c '! grep -q "does not use jemalloc" <<<"$1"' _ "$ERR"

    # a debug file of another build at the build-id path is not used
    mp -p "$PID" --debug-dir "$d/wrongroot" -e info
    check "$v wrong debug file: refused" [ "$RC" -ne 0 ]
    check "$v wrong debug file: says it is another build" grep -q "another build" <<<"$ERR"

    # --exe of another build is refused, not used
    mp -p "$PID" --exe "$TARGETS/alloc_sites" -e info
    check "$v --exe of another build: refused" [ "$RC" -ne 0 ]
    check "$v --exe of another build: says so" grep -q "is another build than process" <<<"$ERR"

    SYMBOLS="$d/debugroot/.build-id/${ID:0:2}/${ID:2}.debug"
    profiles "$v with build-id debug file" --debug-dir "$d/debugroot"
    SYMBOLS="$d/full"
    profiles "$v with --exe" --exe "$d/full"
    kill "$PID"

    TARGETS=$d/linked start_target "$v"
    SYMBOLS="/proc/$PID/root$d/linked/$v.debug"
    profiles "$v with .gnu_debuglink"
    kill "$PID"

    TARGETS=$d/symlinked start_target "$v"
    mp -p "$PID" -e info
    check "$v debuglink symlink in the target's directory: not followed" \
        grep -q "carries its own copy of jemalloc" <<<"$ERR"
    kill "$PID"

    TARGETS=$d/fifo start_target "$v"
    mp -p "$PID" -e info
    check "$v debuglink naming a FIFO: not opened, refused" \
        grep -q "carries its own copy of jemalloc" <<<"$ERR"
    kill "$PID"
done
assert_no_dump_dirs
