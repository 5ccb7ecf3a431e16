#!/usr/bin/env bash
# A user function is never taken for allocator code because of its name:
# path_calloc, path_realloc and my_malloc (alloc_frames.c) hold their own
# exact bytes (lg_prof_sample:0) in top, traces, peek, --focus, list,
# flame --folded and the pprof export, while malloc, calloc, realloc and
# jemalloc's own frames (inside libjemalloc) stay hidden.
. "$SRCDIR/tests/integration/lib.sh"

MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:0 "$TARGETS/alloc_frames" "$WORK/a.heap" \
    >/dev/null || die "alloc_frames failed"
D=$WORK/a.heap
# function -> exact bytes (alloc_frames.c)
declare -A BYTES=([path_calloc]=409600 [path_realloc]=491520 [my_malloc]=524288)
ALLOCATOR='^(malloc|calloc|realloc|je_.*|prof_.*|imalloc.*|.*libjemalloc.*)$'

mp "$D" -e 'top 50 --bytes'
assert_ok
for f in "${!BYTES[@]}"; do
    check "top: $f flat ${BYTES[$f]}" grep -Eq "^ +${BYTES[$f]} .* ${BYTES[$f]} .*  $f\$" <<<"$OUT"
done
check "top: main holds nothing itself" grep -Eq '^ +0 .*  main$' <<<"$OUT"
check "top: no allocator row" bash -c '! awk "NR > 2 {print \$NF}" <<<"$1" | grep -Eq "$2"' _ "$OUT" "$ALLOCATOR"

# --show-alloc keeps them: calloc is back on path_calloc's stack.
mp "$D" -e 'peek ^calloc$ --show-alloc --json'
assert_ok
check "--show-alloc: calloc called by path_calloc" python3 -c "
import json, sys
fn = json.loads(sys.argv[1])['functions'][0]
assert [c['function'] for c in fn['callers']] == ['path_calloc'] and fn['cum_bytes'] == 409600, fn
" "$OUT"

mp "$D" -e 'traces --json'
assert_ok
check "traces: each function leads its own trace with its bytes" python3 - "$OUT" <<'PY'
import json, sys
d = json.loads(sys.argv[1])
want = {"path_calloc": 409600, "path_realloc": 491520, "my_malloc": 524288}
got = {t["frames"][0]: t["bytes"] for t in d["traces"] if t["frames"][0] in want}
assert got == want, got
assert all(t["frames"][1] == "main" for t in d["traces"] if t["frames"][0] in want)
PY

for f in "${!BYTES[@]}"; do
    mp "$D" -e "peek ^$f\$ --json"
    assert_ok
    check "peek $f: flat ${BYTES[$f]}, called by main" python3 -c "
import json, sys
fn = json.loads(sys.argv[1])['functions'][0]
assert fn['function'] == sys.argv[2] and fn['flat_bytes'] == int(sys.argv[3]), fn
assert [c['function'] for c in fn['callers']] == ['main'], fn
" "$OUT" "$f" "${BYTES[$f]}"
    mp "$D" -e "top --focus ^$f\$ --json"
    assert_ok
    check "top --focus $f: ${BYTES[$f]} shown" python3 -c "
import json, sys
d = json.loads(sys.argv[1])
rows = {r['function']: r for r in d['rows']}
assert rows[sys.argv[2]]['flat_bytes'] == int(sys.argv[3]), d
assert rows['main']['flat_bytes'] == 0
" "$OUT" "$f" "${BYTES[$f]}"
done

mp "$D" -e 'list ^path_realloc$ --bytes'
assert_ok
check "list path_realloc: its realloc line holds 491520" \
    grep -Eq '^ +491520 +491520 +[0-9]+: +hold\(realloc\(p, 4096\)\);$' <<<"$OUT"
mp "$D" -e 'list ^path_calloc$ --bytes'
assert_ok
check "list path_calloc: its calloc line holds 409600" \
    grep -Eq '^ +409600 +409600 +[0-9]+: +hold\(calloc\(1, 4096\)\);$' <<<"$OUT"

mp "$D" -e "flame $WORK/a.folded --folded"
assert_ok
for f in "${!BYTES[@]}"; do
    check "flame --folded: ;main;$f ${BYTES[$f]}" grep -Eq ";main;$f ${BYTES[$f]}\$" "$WORK/a.folded"
done
check "flame --folded: no allocator frame" bash -c '! grep -Eq ";(malloc|calloc|realloc|je_[a-z_]*|prof_[a-z_]*) [0-9]+$" "$1"' _ "$WORK/a.folded"

pprof_text "$D" "$WORK/a.txt"
check "pprof: each sample's leaf function and bytes" python3 - "$WORK/a.txt" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
strings = [bytes(s, "ascii").decode("unicode_escape") for s in re.findall(r'^string_table: "(.*)"$', text, re.M)]
funcs = {int(i): strings[int(n)] for i, n in re.findall(r'^function \{\n  id: (\d+)\n  name: (\d+)', text, re.M)}
locs = {}
for block in re.findall(r'^location \{\n(.*?)^\}', text, re.M | re.S):
    lid = int(re.search(r'^  id: (\d+)', block, re.M).group(1))
    locs[lid] = [funcs[int(f)] for f in re.findall(r'function_id: (\d+)', block)]
leaf = {}
for block in re.findall(r'^sample \{\n(.*?)^\}', text, re.M | re.S):
    ids = [int(x) for x in re.findall(r'location_id: (\d+)', block)]
    vals = [int(x) for x in re.findall(r'value: (-?\d+)', block)]
    name = locs[ids[0]][0]
    assert not re.match(r'^(malloc|calloc|realloc|je_.*|prof_.*)$', name), name
    leaf[name] = leaf.get(name, 0) + vals[1]
want = {"path_calloc": 409600, "path_realloc": 491520, "my_malloc": 524288}
assert {k: leaf.get(k) for k in want} == want, leaf
PY
echo "allocator frames ok"
