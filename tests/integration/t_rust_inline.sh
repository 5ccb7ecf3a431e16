#!/usr/bin/env bash
# Inlined functions from Rust's DWARF (issue 14 item 5): rustprof_g, built
# with full debug info (-C debuginfo=2), holds 256 KiB in
# rustprof::inlined::hold_inline, an #[inline(always)] function with no
# frame of its own.  rustc nests each function's DIE inside namespace
# (module) DIEs, where libdw's address lookup does not descend; top
# --focus, peek and list must still name it with its bytes, under
# rustprof::main.
. "$SRCDIR/tests/integration/lib.sh"

# The premise: rustc really inlined it (no symbol of its own).
check "hold_inline inlined" bash -c "! nm '$TARGETS/rustprof_g' | grep -q hold_inline"

_RJEM_MALLOC_CONF=prof:true,prof_active:false,lg_prof_sample:0 CONF= \
    start_target rustprof_g "$WORK/go"
mp -p "$PID" -e 'prof on'
assert_ok
touch "$WORK/go"
wait_until 30 "rustprof_g allocating" grep -q '^allocated' "$TARGET_OUT"
mp -p "$PID" -e "dump $WORK/g.heap"
assert_ok
assert_untouched "$PID"
kill "$PID"
H=$WORK/g.heap
fn='^rustprof::inlined::hold_inline$'

json() {   # json PYTHON-EXPR-ON-d: asserts it on $OUT
    python3 -c "import json,sys; d=json.loads(sys.argv[1]); assert $1, d" "$OUT"
}
mp "$H" -e "top --focus $fn --json"
check "top --focus hold_inline: its 256 KiB" \
    json 'sum(r["flat_bytes"] for r in d["rows"]) == 262144'
check "top --focus hold_inline: a row of its own, cum 256 KiB" \
    json 'any(r["function"] == "rustprof::inlined::hold_inline" and r["cum_bytes"] == 262144 for r in d["rows"])'
mp "$H" -e "peek $fn"
check "peek finds hold_inline, called from rustprof::main" \
    bash -c "grep -Eq '^rustprof::inlined::hold_inline: flat .*cum 256\.0 KiB' <<<\"\$1\" &&
             grep -Eq '256\.0 KiB 100\.0%  rustprof::main$' <<<\"\$1\"" _ "$OUT"
mp "$H" -e "list $fn"
check "list shows hold_inline's source, 256 KiB at its Vec::with_capacity line" \
    grep -Eq '256\.0 KiB +[0-9]+: +let mut v = Vec::with_capacity\(256 \* super::KIB\);' <<<"$OUT"
echo "rust inline ok"
