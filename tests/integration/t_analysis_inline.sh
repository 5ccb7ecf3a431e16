#!/usr/bin/env bash
# Inlined functions are functions in every view: inline_sites (built -O2)
# allocates 4 MiB in inl_buffer and 1 MiB in inl_table, both always_inline
# helpers with no frame of their own.  top --focus, peek, traces, tree and
# the folded flame graph must name them with their exact bytes, as list and
# the pprof export do (there as a Line of the caller's Location).
. "$SRCDIR/tests/integration/lib.sh"

MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:0 "$TARGETS/inline_sites" "$WORK" \
    >/dev/null || die "inline_sites failed"
H=$WORK/inl.heap
# The premise: the compiler really inlined them (no symbol of their own).
check "helpers inlined" bash -c "! nm '$TARGETS/inline_sites' | grep -q ' inl_'"

json() {   # json PYTHON-EXPR-ON-d: asserts it on $OUT
    python3 -c "import json,sys; d=json.loads(sys.argv[1]); assert $1, d" "$OUT"
}

mp "$H" -e 'top --focus ^inl_buffer$ --json'
check "top --focus inl_buffer: its 4 MiB" json 'd["rows"] and abs(sum(r["flat_bytes"] for r in d["rows"]) - 4 * 2**20) < 1'
mp "$H" -e 'top 50 --json'
check "top: inl_table flat 1 MiB" json 'any(r["function"] == "inl_table" and r["flat_bytes"] == 2**20 for r in d["rows"])'
check "top: outer_a holds inl_buffer's bytes as cum only" \
    json 'any(r["function"] == "outer_a" and r["flat_bytes"] == 0 and r["cum_bytes"] == 4 * 2**20 for r in d["rows"])'
mp "$H" -e 'peek ^inl_buffer$'
check "peek finds inl_buffer, called from outer_a" \
    bash -c "grep -Eq '^inl_buffer: flat 4\.0 MiB' <<<\"\$1\" && grep -Eq '4\.0 MiB 100\.0%  outer_a$' <<<\"\$1\"" _ "$OUT"
mp "$H" -e 'traces --json'
check "traces: inl_buffer above outer_a" json 'any(t["frames"][:2] == ["inl_buffer", "outer_a"] for t in d["traces"])'
mp "$H" -e 'tree'
check "tree: inl_table under outer_b" \
    bash -c "grep -A1 -E ' outer_b$' <<<\"\$1\" | grep -Eq '1\.0 MiB +inl_table$'" _ "$OUT"
mp "$H" -e "flame $WORK/f.txt --folded"
check "flame --folded: ...;outer_a;inl_buffer 4194304" grep -Eq ';outer_a;inl_buffer 4194304$' "$WORK/f.txt"
mp "$H" -e 'list ^inl_table$'
check "list shows inl_table's source" grep -q 'calloc(1, size)' <<<"$OUT"
mp "$H" -e "pprof $WORK/i.pb.gz"
OUT=$(python3 "$SRCDIR/tests/integration/pprof_json.py" "$SRCDIR" "$WORK/i.pb.gz")
check "pprof: inl_buffer is a Line of outer_a's Location" \
    json 'any(s["locations"][0] == ["inl_buffer", "outer_a"] and s["values"][1] == 4 * 2**20 for s in d["samples"])'
echo "inline ok"
