# A stripped Rust release build (strip -s, as Cargo's `strip = true`)
# carrying its own _rjem_ jemalloc (issue 14.3): with its build-id debug
# file under --debug-dir, or --exe naming the unstripped build, memprof
# finds mallctl, profiles it and names its functions as Rust writes them;
# with neither it says the program carries a stripped jemalloc and names
# the build-id path, and never advises LD_PRELOAD of libjemalloc (a Rust
# global allocator never calls malloc).
. "$SRCDIR/tests/integration/lib.sh"

bin=rustprof
d=$WORK/stripped
mkdir -p "$d"
cp "$TARGETS/$bin" "$WORK/$bin.full"
cp "$TARGETS/$bin" "$d/$bin" && strip -s "$d/$bin"
id=$(readelf -n "$d/$bin" | awk '/Build ID:/ {print $3}')
[ -n "$id" ] || die "$bin has no build-id"
mkdir -p "$WORK/debugroot/.build-id/${id:0:2}"
objcopy --only-keep-debug "$WORK/$bin.full" "$WORK/debugroot/.build-id/${id:0:2}/${id:2}.debug"
check "the stripped build has no symbol table" \
    sh -c "! readelf -S '$d/$bin' | grep -q '\.symtab'"

_RJEM_MALLOC_CONF=prof:true,prof_active:false,lg_prof_sample:0 CONF= \
    TARGETS=$d start_target "$bin" "$WORK/go"

mp -p "$PID" -e 'prof on'
check "no debug file: refused" [ "$RC" -ne 0 ]
check "no debug file: says it carries a stripped jemalloc" \
    err_has 'carries its own copy of jemalloc, stripped of its symbols'
check "no debug file: names the build-id path" err_has "\.build-id/${id:0:2}/${id:2}\.debug"
check "no debug file: no LD_PRELOAD advice" err_lacks 'LD_PRELOAD'
check "no debug file: the process is left running, untraced" untouched "$PID"

mp -p "$PID" --debug-dir "$WORK/debugroot" -e 'prof on'
check "build-id debug file: prof on" [ "$RC" -eq 0 ]
touch "$WORK/go"
wait_until 30 "$bin allocating" grep -q '^allocated' "$TARGET_OUT"
mp -p "$PID" --debug-dir "$WORK/debugroot" -e dump -e 'top 30'
check "build-id debug file: dump and top" [ "$RC" -eq 0 ]
check "build-id debug file: names a Rust function as Rust writes it" \
    out_has 'rustprof::leaky::hold_vec'
check "build-id debug file: no hash left in names" out_lacks '::h[0-9a-f]{16}'

mp -p "$PID" --exe "$WORK/$bin.full" -e 'prof off'
check "--exe with the unstripped build: prof off" [ "$RC" -eq 0 ]
check "--exe: the process is left running, untraced" untouched "$PID"
