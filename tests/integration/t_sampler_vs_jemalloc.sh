# The sampler's stacks are jemalloc's: one program (glibc_live, -O2 without
# frame pointers) run both ways, every allocation recorded (rate 0): under
# jemalloc's own profiler (LD_PRELOADed, prof:true), and on glibc malloc
# with memprof's sampler put in.  The same round of allocations must give
# the same call stacks (function by function, to _start) with the same
# object counts; the sampler's bytes are the sizes asked for, exactly.
. "$SRCDIR/tests/integration/lib.sh"

JEMALLOC_SO=$(ldconfig -p | awk '/libjemalloc\.so\.2 .*x86-64/ {print $NF; exit}')
[ -n "$JEMALLOC_SO" ] || die "libjemalloc.so.2 not found"

# traces --json as sorted lines "objects frame<frame<...": one per stack.
stack_lines() {
    python3 -c '
import json, re, sys
t = sys.stdin.read()
d = json.JSONDecoder().raw_decode(t[re.search(r"^[[{]", t, re.M).start():])[0]
for tr in d["traces"]:
    print(tr["objects"], "<".join(tr["frames"]))' <<<"$OUT" | sort
}

# one_way NAME [CMD]: CMD, prof on, a round, the traces of a dump.
one_way() {
    open_session "$1"
    [ -n "${2:-}" ] && echo "$2" >&3
    echo 'prof on' >&3
    wait_until 30 "$1: profiling on" file_has "$WORK/$1.out" '^profiling is now on'
    kill -USR1 "$PID"
    wait_until 30 "$1: the round" file_has "$TARGET_OUT" '^round 1 done'
    echo 'dump' >&3
    echo 'traces --json' >&3
    echo 'prof off' >&3
    close_session
    OUT=$(cat "$WORK/$1.out")
}

# Rate 0 from the start: set at run time, jemalloc would first finish each
# thread's countdown drawn at the old rate.
LD_PRELOAD=$JEMALLOC_SO CONF=prof:true,prof_active:false,lg_prof_sample:0 start_target glibc_live
one_way jemalloc
check "jemalloc's own profiler: session ended well" [ "$MPRC" -eq 0 ]
check "jemalloc's own profiler was the one used" file_has "$WORK/jemalloc.out" 'mallctl in .*libjemalloc'
stack_lines >"$WORK/jemalloc.stacks"

CONF= start_target glibc_live
one_way sampler 'prof sample 0'
check "sampler: session ended well" [ "$MPRC" -eq 0 ]
check "sampler: memprof's sampler was the one used" file_has "$WORK/sampler.out" "memprof's sampler is in process $PID"
stack_lines >"$WORK/sampler.stacks"

check "five stacks each way" [ "$(wc -l <"$WORK/sampler.stacks")" -eq 5 ] && [ "$(wc -l <"$WORK/jemalloc.stacks")" -eq 5 ]
check "every stack reaches _start through run_round and main" \
    [ "$(grep -c '<run_round<main<.*<_start$' "$WORK/sampler.stacks")" -eq 5 ]
check "the same stacks and object counts both ways" diff "$WORK/jemalloc.stacks" "$WORK/sampler.stacks"
for f in keep_malloc keep_small keep_calloc keep_realloc keep_aligned; do
    truth=$(awk -v f="$f" '$1 == "live" && $2 == f {print $3}' "$TARGET_OUT")
    got=$(python3 -c '
import json, re, sys
t = open(sys.argv[1]).read()
d = json.JSONDecoder().raw_decode(t[re.search(r"^[[{]", t, re.M).start():])[0]
print(sum(tr["bytes"] for tr in d["traces"] if tr["frames"][0] == sys.argv[2]))' "$WORK/sampler.out" "$f")
    check "sampler: $f's live bytes are exactly what it allocated ($truth)" [ "$got" = "$truth" ]
done
check "the process is left running, untraced" untouched "$PID"
