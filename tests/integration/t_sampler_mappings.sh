# memprof's sampler follows mmap, munmap and mremap as it follows malloc
# (docs/sampler.md, "Mappings"), in a glibc process whose mappings per
# function are known (glibc_mappings, -O2 without frame pointers).  At the
# default rate (2^19), after one round: the anonymous mmap leak shows by
# its function, leak_mappings, within 10 % of the bytes it leaked; the
# mappings cut in half by munmap show as their kept halves (trim_mappings,
# within 15 %); a mapping grown by mremap stays its maker's for the bytes
# it had (map_small) and charges the bytes it grew by to the stack that
# grew it (grow_mappings); the program break grown by sbrk shows by its
# function (grow_break) and goes when brk gives it back; mappings made and
# unmapped (churn_mappings) are
# absent; every mapping stack has the marker root "[mapped: mmap/mremap/brk]",
# which no heap stack has, and big_heap's blocks (which glibc maps itself)
# count once, as heap (no double count).  After everything is unmapped,
# no mapping is left.  The mapping stand-ins keep errno (a failing munmap
# still says EINVAL) and, after 'prof off', no slot points at them.
. "$SRCDIR/tests/integration/lib.sh"

CONF= start_target glibc_mappings
# send SESSION CMD RE: CMD to the open session, then wait for RE in its output
send() {
    echo "$2" >&3
    wait_until 30 "session $1 to answer '$2'" grep -Eq -- "$3" "$WORK/$1.out"
}
# round N: SIGUSR1, then wait for round N's "done" line
round() {
    kill -USR1 "$PID"
    wait_until 60 "round $1 to finish" grep -q "^round $1 done" "$TARGET_OUT"
}
rows() { jf "' '.join(str(r['$2']) for r in d['rows'] if r['function'] == '$1')"; }
# within GOT WANT PCT: GOT is within PCT % of WANT.
within() { awk -v g="${1:-0}" -v w="$2" -v p="$3" 'BEGIN { exit !(g > w * (1 - p / 100) && g < w * (1 + p / 100)) }'; }
truth() { awk -v f="$1" '$2 == f {s += $3} END {print s + 0}' "$TARGET_OUT"; }
# slots_into_sampler FILE: the slots pointing into the sampler, one a line
slots_into_sampler() { got_into_sampler "$PID" >/dev/null 2>"$1"; cat "$1"; }
program_mmap_slot() { grep -Eq "of $TARGETS/glibc_mappings \(mmap" "$1"; }

open_session s
send s 'prof on' 'profiling is now on'
check "on: mmap, munmap and mremap slots of the program point into the sampler" \
    [ "$(got_into_sampler "$PID")" -ge 7 ]
round 1
send s "dump $WORK/d1.heap" '^dump1: [0-9]+ stacks'
mp "$WORK/d1.heap" -e 'top --json 40'
check "analysed" mp_ok
for f in leak_mappings:10 trim_mappings:15 grow_mappings:15 grow_break:15 big_heap:15; do
    fn=${f%:*} pct=${f#*:}
    got=$(rows "$fn" flat_bytes) want=$(truth "$fn")
    echo "$fn: estimated ${got:-none}, truth $want"
    check "$fn holds its $want bytes within $pct % (got ${got:-none})" within "$got" "$want" "$pct"
done
got=$(rows map_small flat_bytes) want=$(truth map_small)
echo "map_small: estimated ${got:-none}, truth $want"
check "map_small keeps the bytes its mappings had before mremap grew them (within 20 %)" \
    within "$got" "$want" 20
check "errno: each mapping call left errno as it should, sampled or not" \
    grep -q '^errno kept$' "$TARGET_OUT"
check "churn_mappings (mapped and unmapped) is absent" [ -z "$(rows churn_mappings flat_bytes)" ]
mp "$WORK/d1.heap" -e 'top --cum --json 40'
mapped=$(rows '[mapped: mmap/mremap/brk]' cum_bytes)
want=$(awk '$1 == "mapped" {s += $3} END {print s}' "$TARGET_OUT")
echo "[mapped: mmap/mremap/brk]: estimated ${mapped:-none}, truth $want"
check "the mapping marker holds all mapped bytes, and only them (within 10 %)" \
    within "$mapped" "$want" 10
mp "$WORK/d1.heap" -e 'traces 40'
printf '%s\n' "$OUT" >"$WORK/traces1"
check "leak_mappings' stack ends in the marker root" \
    awk '/^-+\+/ {l = 0} /leak_mappings/ {l = 1} l && /\[mapped: mmap\/mremap\/brk\]/ {ok = 1} END {exit !ok}' "$WORK/traces1"
check "big_heap's stack has no marker (heap, counted once)" \
    awk '/^-+\+/ {b = 0} /big_heap/ {b = 1} b && /\[mapped: mmap\/mremap\/brk\]/ {bad = 1} END {exit bad}' "$WORK/traces1"

# everything unmapped: no mapping left
kill -USR2 "$PID"
wait_until 20 "the target to release all" grep -q '^released ' "$TARGET_OUT"
send s "dump $WORK/d2.heap" '^dump2: [0-9]+ stacks'
mp "$WORK/d2.heap" -e 'top --cum --json 40'
check "after munmap of all: no mapping function left" \
    [ -z "$(rows leak_mappings flat_bytes)$(rows trim_mappings flat_bytes)$(rows grow_mappings flat_bytes)$(rows map_small flat_bytes)$(rows grow_break flat_bytes)" ]
check "after munmap of all: no marker left" [ -z "$(rows '[mapped: mmap/mremap/brk]' cum_bytes)" ]
check "after munmap of all: the process's own count of mapping samples is 0" \
    [ "$(sampler_ctl "$PID" map_live)" = 0 ]

send s 'prof off' 'profiling is now off'
check "off: no GOT slot points into the sampler" [ "$(got_into_sampler "$PID")" = 0 ]
close_session
check "the session ended well" [ "$MPRC" = 0 ]
round 2
check "the process is left running, untraced" untouched "$PID"

# jemalloc put in front (no prof:true: the sampler): its own calls to mmap
# and munmap (its extents, big_heap's blocks) are not redirected, the
# program's are; big_heap counts once, as heap.
JEMALLOC_SO=$(ldconfig -p | awk '/libjemalloc\.so\.2 .*x86-64|libjemalloc\.so\.2 .*AArch64/ {print $NF; exit}')
CONF= LD_PRELOAD=$JEMALLOC_SO start_target glibc_mappings
open_session s2
send s2 'prof on' 'profiling is now on'
slots_into_sampler "$WORK/slots"
check "jemalloc: the program's mmap slot points into the sampler" program_mmap_slot "$WORK/slots"
check "jemalloc: none of libjemalloc's mapping slots does" \
    bash -c '! grep -Eq "libjemalloc[^ ]* \((mmap|munmap|mremap)" "$1"' _ "$WORK/slots"
round 1
send s2 "dump $WORK/j1.heap" '^dump1: [0-9]+ stacks'
mp "$WORK/j1.heap" -e 'top --json 40'
for f in leak_mappings:10 big_heap:15; do
    fn=${f%:*} pct=${f#*:}
    got=$(rows "$fn" flat_bytes) want=$(truth "$fn")
    check "jemalloc: $fn holds its $want bytes within $pct % (got ${got:-none})" \
        within "$got" "$want" "$pct"
done
mp "$WORK/j1.heap" -e 'traces 40'
printf '%s\n' "$OUT" >"$WORK/traces2"
check "jemalloc: big_heap's stack has no marker (jemalloc's own mmap not counted)" \
    awk '/^-+\+/ {b = 0} /big_heap/ {b = 1} b && /\[mapped: mmap\/mremap\/brk\]/ {bad = 1} END {exit bad}' "$WORK/traces2"
send s2 'prof off' 'profiling is now off'
close_session
check "jemalloc: the session ended well" [ "$MPRC" = 0 ]

# jemalloc with its own profiler (prof:true): 'prof on --mappings' puts
# memprof's sampler in for mmap, munmap and mremap alone, beside it: the
# heap's dump is jemalloc's (big_heap, no marker), 'dump --mappings' has
# the mappings (leak_mappings, no heap function), no malloc slot and no
# slot of libjemalloc points at the sampler.
LD_PRELOAD=$JEMALLOC_SO start_target glibc_mappings
open_session s3
send s3 'prof on --mappings' 'mappings are now followed'
send s3 'prof on' 'profiling is now on'
slots_into_sampler "$WORK/slots3"
check "jemalloc's profiler: the program's mmap slot points into the sampler" \
    program_mmap_slot "$WORK/slots3"
check "jemalloc's profiler: no malloc or free slot does, nor any of libjemalloc" \
    bash -c '! grep -Eq "\((malloc|free|calloc|realloc)|libjemalloc" "$1"' _ "$WORK/slots3"
round 1
send s3 "dump $WORK/h3.heap" '^dump1: [0-9]+ stacks'
send s3 "dump --mappings $WORK/m3.heap" '^dump2: [0-9]+ stacks'
mp "$WORK/h3.heap" -e 'top --cum --json 40'
got=$(rows big_heap flat_bytes) want=$(truth big_heap)
check "jemalloc's dump: big_heap holds its $want bytes within 15 % (got ${got:-none})" \
    within "$got" "$want" 15
check "jemalloc's dump: no mapping marker" [ -z "$(rows '[mapped: mmap/mremap/brk]' cum_bytes)" ]
mp "$WORK/m3.heap" -e 'top --json 40'
got=$(rows leak_mappings flat_bytes) want=$(truth leak_mappings)
check "the mappings' dump: leak_mappings holds its $want bytes within 10 % (got ${got:-none})" \
    within "$got" "$want" 10
check "the mappings' dump: no heap function (big_heap)" [ -z "$(rows big_heap flat_bytes)" ]
send s3 'prof off --mappings' 'mappings are no longer followed'
check "after 'prof off --mappings': no GOT slot points into the sampler" \
    [ "$(got_into_sampler "$PID")" = 0 ]
close_session
check "jemalloc's profiler: the session ended well" [ "$MPRC" = 0 ]

# where the sampler serves 'prof', --mappings says 'prof on' does it all
CONF= start_target glibc_mappings
mp -p "$PID" -e 'prof on --mappings'
check "glibc: 'prof on --mappings' is refused" mp_failed
check "glibc: and says 'prof on' follows mappings with the heap" \
    err_has "memprof's sampler serves 'prof' and follows mappings .* with the heap: 'prof on'"
