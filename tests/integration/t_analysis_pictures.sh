#!/usr/bin/env bash
# flame and graph on real dumps of alloc_sites: the SVG parses as XML and
# names the known allocation sites; folded stacks add up to top's total;
# folded --base keeps only what grew; the DOT text parses with Graphviz's
# dot and names the known functions; .svg goes through dot; without dot in
# PATH the command says how to install it and batch mode exits 1.
. "$SRCDIR/tests/integration/lib.sh"

MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:10 "$TARGETS/alloc_sites" "$WORK" \
    >/dev/null || die "alloc_sites failed"
A=$WORK/a.heap
B=$WORK/b.heap

valid_xml() {
    python3 -c 'import xml.dom.minidom,sys; xml.dom.minidom.parse(sys.argv[1])' "$1"
}

# ---- flame: SVG ----
mp "$B" -e "flame $WORK/flame.svg"
check "flame WORK/flame.svg: succeeds" mp_ok
check "flame WORK/flame.svg: shows b.heap: flame graph written to WORK/flame.svg" out_has "^b\.heap: flame graph written to $WORK/flame\.svg$"
check "flame.svg is well-formed XML" valid_xml "$WORK/flame.svg"
for f in leak_big leak_small thread_alloc recurse_alloc main; do
    check "flame.svg has a frame for $f" grep -q "<title>$f: " "$WORK/flame.svg"
done
check "leak_big's frame has its bytes and share" \
    grep -Eq '<title>leak_big: 64\.0 MiB \(8[0-9]\.[0-9]%\)</title>' "$WORK/flame.svg"
# recursion: one frame per level of recurse_alloc
check "flame.svg has the 6 recursion levels" [ "$(grep -c '<title>recurse_alloc: ' "$WORK/flame.svg")" -eq 6 ]
check "flame.svg shows no allocator frames" file_lacks "$WORK/flame.svg" 'prof_backtrace|malloc_default'

# ---- flame --folded: totals equal top's ----
mp "$B" -e 'flame - --folded'
check "flame - --folded: succeeds" mp_ok
FOLDED=$OUT
check "folded: a leak_big line" grep -Eq '^_start;.*;main;leak_big 6710886[0-9]$' <<<"$FOLDED"
check "folded: a thread_alloc line" grep -Eq '^[^ ]*;start_thread;thread_alloc [0-9]+$' <<<"$FOLDED"
mp "$B" -e 'top --json'
check "top --json: succeeds" mp_ok
folded_total_is_tops() {
python3 - "$FOLDED" "$OUT" <<'PY'
import json, sys
lines = sys.argv[1].splitlines()
total = sum(int(l.rsplit(" ", 1)[1]) for l in lines)
want = json.loads(sys.argv[2])["total_bytes"]
assert abs(total - want) <= 1, (total, want)
assert len(set(l.rsplit(" ", 1)[0] for l in lines)) == len(lines), "stacks repeated"
PY
}
check "folded: the total is top's, no stack repeated" folded_total_is_tops
mp "$B" -e 'flame - --folded --objects --focus ^leak_small$'
check "flame - --folded --objects --focus leak_small: succeeds" mp_ok
check "folded --objects --focus: leak_small's objects" out_has '^.*;main;leak_small 8[0-9]{3}$'
check "folded --focus keeps no other stack" [ "$(wc -l <<<"$OUT")" -eq 1 ]

# ---- flame --base: folded growth only, SVG differential ----
mp "$A" "$B" -e 'flame - --folded --base a.heap b.heap'
check "flame - --folded --base a.heap b.heap: succeeds" mp_ok
check "flame - --folded --base a.heap b.heap: shows ;main;leak_big 50331[0-9]{3}" out_has ';main;leak_big 50331[0-9]{3}$'     # 48 MiB more
check "flame - --folded --base a.heap b.heap: does not show temp_buffers" out_lacks 'temp_buffers'                   # freed: shrank
mp "$A" "$B" -e "flame $WORK/growth.svg --base a.heap"
check "flame WORK/growth.svg --base a.heap: succeeds" mp_ok
check "growth.svg is well-formed XML" valid_xml "$WORK/growth.svg"
check "growth.svg is titled as differential" grep -q 'Differential flame graph' "$WORK/growth.svg"

# ---- graph: DOT ----
mp "$B" -e "graph $WORK/g.dot"
check "graph WORK/g.dot: succeeds" mp_ok
check "dot reads g.dot" dot -Tsvg -o "$WORK/from_dot.svg" "$WORK/g.dot"
for f in leak_big leak_small thread_alloc recurse_alloc main; do
    check "g.dot has a node for $f" grep -q "label=\"$f\\\\n" "$WORK/g.dot"
done
edge_main_leak_big() {
python3 - "$WORK/g.dot" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
ids = dict((m.group(2), m.group(1)) for m in re.finditer(r'  (N\d+) \[label="([^\\"]+)\\n', text))
assert re.search(r'  %s -> %s \[label="64\.0 MiB"' % (ids["main"], ids["leak_big"]), text), ids
PY
}
check "g.dot has the edge main -> leak_big, 64 MiB" edge_main_leak_big
mp "$B" -e "graph - --nodefraction 0.2"
check "graph - --nodefraction 0.2: succeeds" mp_ok
check "graph - --nodefraction 0.2: shows leak_big" out_has 'leak_big'
check "graph - --nodefraction 0.2: does not show label=leak_small" out_lacks 'label="leak_small'              # 10% < 20%

# ---- graph: images through dot ----
mp "$B" -e "graph $WORK/g.svg"
check "graph WORK/g.svg: succeeds" mp_ok
check "g.svg is well-formed XML" valid_xml "$WORK/g.svg"
check "g.svg names leak_big" grep -q 'leak_big' "$WORK/g.svg"

# ---- errors ----
OUT=$(PATH=/nonexistent "$MEMPROF" "$B" -e "graph $WORK/nodot.svg" -e 'top' 2>"$WORK/err"); RC=$?
ERR=$(cat "$WORK/err")
check "without dot: exit 1" [ "$RC" -eq 1 ]
check "without dot: says 'dot' program is not installed" err_has "'dot' program is not installed"
check "without dot: says apt-get install graphviz" err_has 'apt-get install graphviz'
check "without dot: says graph FILE.dot" err_has 'graph FILE\.dot'
check "without dot: the batch stops there" out_lacks 'flat%'
check "without dot: no .svg written" [ ! -e "$WORK/nodot.svg" ]
OUT=$(PATH=/nonexistent "$MEMPROF" "$B" -e "graph $WORK/nodot.dot" 2>"$WORK/err"); RC=$?
check "DOT text needs no dot: exit 0" [ "$RC" -eq 0 ]
check "DOT text needs no dot: written" [ -s "$WORK/nodot.dot" ]

mp "$B" -e "graph $WORK/g.txt"
check "graph WORK/g.txt: fails" mp_failed
check "graph WORK/g.txt: says end it in .dot" err_has 'end it in \.dot'
mp "$B" -e 'flame - --json'
check "flame - --json: fails" mp_failed
check "flame - --json: says --json does not apply" err_has '--json does not apply'
mp "$B" -e 'graph - --base b.heap'
check "graph - --base b.heap: fails" mp_failed
check "graph - --base b.heap: says --base does not apply" err_has '--base does not apply'
mp "$B" -e 'flame'
check "flame: fails" mp_failed
check "flame: says flame: usage: flame FILE" err_has 'flame: usage: flame FILE'
mp "$A" "$B" -e "flame $WORK/same.svg --base b.heap"
check "flame WORK/same.svg --base b.heap: fails" mp_failed
check "flame WORK/same.svg --base b.heap: says --base b.heap is the profile drawn, so nothing grew" err_has '--base b\.heap is the profile drawn, so nothing grew'
mp "$B" -e "flame $WORK/no/such/dir/f.svg"
check "flame WORK/no/such/dir/f.svg: fails" mp_failed
check "flame WORK/no/such/dir/f.svg: says cannot write WORK/no/such/dir/f.svg: No such file or directory" err_has "cannot write $WORK/no/such/dir/f\.svg: No such file or directory"
mp "$B" -e 'flame /dev/full'
check "flame /dev/full: fails" mp_failed
check "flame /dev/full: says writing /dev/full failed: No space left on device" err_has 'writing /dev/full failed: No space left on device'

# dot that fails, that is killed, that cannot be run; no temporary directory
fake_dot() {
    mkdir -p "$WORK/fake"
    printf '#!/bin/sh\n%s\n' "$1" >"$WORK/fake/dot"
    chmod "${2:-755}" "$WORK/fake/dot"
    OUT=$(PATH="$WORK/fake" "$MEMPROF" "$B" -e "graph $WORK/fake.svg" 2>"$WORK/err"); RC=$?
    ERR=$(cat "$WORK/err")
    check "dot '$1' (mode ${2:-755}): exit 1" [ "$RC" -eq 1 ]
}
fake_dot 'exit 3'
check "a failing dot: says dot -Tsvg failed with exit status 3" err_has 'dot -Tsvg failed with exit status 3'
fake_dot 'kill -9 $$'
check "a killed dot: says dot -Tsvg was killed by signal 9" err_has 'dot -Tsvg was killed by signal 9'
fake_dot 'exit 0' 644
check "a dot that cannot run: says could not run dot: Permission denied" err_has 'could not run dot: Permission denied'
OUT=$(TMPDIR=/nonexistent-memprof "$MEMPROF" "$B" -e "graph $WORK/t.svg" 2>"$WORK/err"); RC=$?
ERR=$(cat "$WORK/err")
check "no temporary directory: exit 1" [ "$RC" -eq 1 ]
check "no temporary directory: says cannot make a temporary file for dot in /nonexistent-memprof: No such file or directory; set TMPDIR" err_has 'cannot make a temporary file for dot in /nonexistent-memprof: No such file or directory; set TMPDIR'
