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
    python3 -c 'import xml.dom.minidom,sys; xml.dom.minidom.parse(sys.argv[1])' "$1" \
        || die "$1 is not well-formed XML"
}

# ---- flame: SVG ----
mp "$B" -e "flame $WORK/flame.svg"
assert_ok
assert_out "^b\.heap: flame graph written to $WORK/flame\.svg$"
valid_xml "$WORK/flame.svg"
for f in leak_big leak_small thread_alloc recurse_alloc main; do
    grep -q "<title>$f: " "$WORK/flame.svg" || die "flame.svg has no frame for $f"
done
grep -Eq '<title>leak_big: 64\.0 MiB \(8[0-9]\.[0-9]%\)</title>' "$WORK/flame.svg" \
    || die "leak_big's frame lacks its bytes and share"
# recursion: one frame per level of recurse_alloc
[ "$(grep -c '<title>recurse_alloc: ' "$WORK/flame.svg")" -eq 6 ] \
    || die "flame.svg lacks the 6 recursion levels"
! grep -Eq 'prof_backtrace|malloc_default' "$WORK/flame.svg" ||
    die "flame.svg shows allocator frames"

# ---- flame --folded: totals equal top's ----
mp "$B" -e 'flame - --folded'
assert_ok
FOLDED=$OUT
grep -Eq '^_start;.*;main;leak_big 6710886[0-9]$' <<<"$FOLDED" || die "no leak_big line"
grep -Eq '^[^ ]*;start_thread;thread_alloc [0-9]+$' <<<"$FOLDED" || die "no thread_alloc line"
mp "$B" -e 'top --json'
assert_ok
python3 - "$FOLDED" "$OUT" <<'PY' || die "folded total differs from top's"
import json, sys
lines = sys.argv[1].splitlines()
total = sum(int(l.rsplit(" ", 1)[1]) for l in lines)
want = json.loads(sys.argv[2])["total_bytes"]
assert abs(total - want) <= 1, (total, want)
assert len(set(l.rsplit(" ", 1)[0] for l in lines)) == len(lines), "stacks repeated"
PY
mp "$B" -e 'flame - --folded --objects --focus ^leak_small$'
assert_ok
grep -Eq '^.*;main;leak_small 8[0-9]{3}$' <<<"$OUT" || die "--objects --focus: $OUT"
[ "$(wc -l <<<"$OUT")" -eq 1 ] || die "--focus kept other stacks"

# ---- flame --base: folded growth only, SVG differential ----
mp "$A" "$B" -e 'flame - --folded --base a.heap b.heap'
assert_ok
assert_out ';main;leak_big 50331[0-9]{3}$'     # 48 MiB more
assert_no_out 'temp_buffers'                   # freed: shrank
mp "$A" "$B" -e "flame $WORK/growth.svg --base a.heap"
assert_ok
valid_xml "$WORK/growth.svg"
grep -q 'Differential flame graph' "$WORK/growth.svg" || die "growth.svg is not titled as differential"

# ---- graph: DOT ----
mp "$B" -e "graph $WORK/g.dot"
assert_ok
dot -Tsvg "$WORK/g.dot" >"$WORK/from_dot.svg" || die "dot cannot read g.dot"
for f in leak_big leak_small thread_alloc recurse_alloc main; do
    grep -q "label=\"$f\\\\n" "$WORK/g.dot" || die "g.dot has no node for $f"
done
python3 - "$WORK/g.dot" <<'PY' || die "g.dot lacks the edge main -> leak_big"
import re, sys
text = open(sys.argv[1]).read()
ids = dict((m.group(2), m.group(1)) for m in re.finditer(r'  (N\d+) \[label="([^\\"]+)\\n', text))
assert re.search(r'  %s -> %s \[label="64\.0 MiB"' % (ids["main"], ids["leak_big"]), text), ids
PY
mp "$B" -e "graph - --nodefraction 0.2"
assert_ok
assert_out 'leak_big'
assert_no_out 'label="leak_small'              # 10% < 20%

# ---- graph: images through dot ----
mp "$B" -e "graph $WORK/g.svg"
assert_ok
valid_xml "$WORK/g.svg"
grep -q 'leak_big' "$WORK/g.svg" || die "g.svg does not name leak_big"

# ---- errors ----
OUT=$(PATH=/nonexistent "$MEMPROF" "$B" -e "graph $WORK/nodot.svg" -e 'top' 2>"$WORK/err"); RC=$?
ERR=$(cat "$WORK/err")
[ "$RC" -eq 1 ] || die "without dot: exit $RC, want 1"
assert_err "'dot' program is not installed"
assert_err 'apt-get install graphviz'
assert_err 'graph FILE\.dot'
assert_no_out 'flat%'                          # batch mode stopped there
[ ! -e "$WORK/nodot.svg" ] || die "nodot.svg written without dot"
OUT=$(PATH=/nonexistent "$MEMPROF" "$B" -e "graph $WORK/nodot.dot" 2>"$WORK/err"); RC=$?
[ "$RC" -eq 0 ] && [ -s "$WORK/nodot.dot" ] || die "DOT text needs no dot: exit $RC"

mp "$B" -e "graph $WORK/g.txt"
assert_fail
assert_err 'end it in \.dot'
mp "$B" -e 'flame - --json'
assert_fail
assert_err '--json does not apply'
mp "$B" -e 'graph - --base b.heap'
assert_fail
assert_err '--base does not apply'
mp "$B" -e 'flame'
assert_fail
assert_err 'flame: usage: flame FILE'
mp "$A" "$B" -e "flame $WORK/same.svg --base b.heap"
assert_fail
assert_err '--base b\.heap is the profile drawn, so nothing grew'
mp "$B" -e "flame $WORK/no/such/dir/f.svg"
assert_fail
assert_err "cannot write $WORK/no/such/dir/f\.svg: No such file or directory"
mp "$B" -e 'flame /dev/full'
assert_fail
assert_err 'writing /dev/full failed: No space left on device'

# dot that fails, that is killed, that cannot be run; no temporary directory
fake_dot() {
    mkdir -p "$WORK/fake"
    printf '#!/bin/sh\n%s\n' "$1" >"$WORK/fake/dot"
    chmod "${2:-755}" "$WORK/fake/dot"
    OUT=$(PATH="$WORK/fake" "$MEMPROF" "$B" -e "graph $WORK/fake.svg" 2>"$WORK/err"); RC=$?
    ERR=$(cat "$WORK/err")
    [ "$RC" -eq 1 ] || die "dot '$1' (mode ${2:-755}): exit $RC, want 1: $ERR"
}
fake_dot 'exit 3'
assert_err 'dot -Tsvg failed with exit status 3'
fake_dot 'kill -9 $$'
assert_err 'dot -Tsvg was killed by signal 9'
fake_dot 'exit 0' 644
assert_err 'could not run dot: Permission denied'
OUT=$(TMPDIR=/nonexistent-memprof "$MEMPROF" "$B" -e "graph $WORK/t.svg" 2>"$WORK/err"); RC=$?
ERR=$(cat "$WORK/err")
[ "$RC" -eq 1 ] || die "no temporary directory: exit $RC"
assert_err 'cannot make a temporary file for dot in /nonexistent-memprof: No such file or directory; set TMPDIR'
echo ok
