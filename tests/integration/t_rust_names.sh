#!/usr/bin/env bash
# A Rust program (tests/targets/rust: jemalloc-sys's static _rjem_ copy
# under a #[global_allocator]) attached to live, profiled at
# lg_prof_sample:0, dumped and read: `top` names each function as Rust
# writes it (no hash, no $LT$ escapes, v0 names readable), every named
# function holds exactly its own bytes (cum: std's Vec methods inlined
# into it are frames of their own, from the DWARF, as in pprof), and no
# allocation shim (__rust_alloc, __rg_alloc, <A as GlobalAlloc>::alloc,
# alloc::alloc::*, alloc::raw_vec::finish_grow...) nor jemalloc frame
# carries any; the pprof export keeps the mangled name as
# Function.system_name.
. "$SRCDIR/tests/integration/lib.sh"

# profile BIN: run BIN, switch the profiler on, let it allocate, dump to
# $WORK/BIN.heap.
profile() {
    local bin=$1
    _RJEM_MALLOC_CONF=prof:true,prof_active:false,lg_prof_sample:0 CONF= \
        start_target "$bin" "$WORK/go.$bin"
    mp -p "$PID" -e 'prof on'
    assert_ok
    touch "$WORK/go.$bin"
    wait_until 30 "$bin allocating" grep -q '^allocated' "$TARGET_OUT"
    mp -p "$PID" -e "dump $WORK/$bin.heap"
    assert_ok
    assert_untouched "$PID"
    kill "$PID"
}

# names_and_bytes BIN KIND NAME=BYTES...: top --json of BIN's dump.  KIND
# flat: each NAME holds exactly BYTES itself; cum: through its callees
# (Vec's own methods, out of line or inlined, are frames).
names_and_bytes() {
    local bin=$1 kind=$2; shift 2
    mp "$WORK/$bin.heap" -e 'top 100 --json'
    assert_ok
    check "$bin: names as Rust writes them, each with its own bytes ($kind)" \
        python3 - "$OUT" "$kind" "$@" <<'PY'
import json, re, sys
d = json.loads(sys.argv[1])
kind = sys.argv[2]
want = dict(a.rsplit("=", 1) for a in sys.argv[3:])
rows = {r["function"]: r for r in d["rows"]}
ok = True
for name, size in want.items():
    r = rows.get(name)
    got = r and r[kind + "_bytes"]
    if got != int(size):
        print(f"{name}: {kind} {got}, want {size}"); ok = False
if d["total_bytes"] != sum(map(int, want.values())):
    print("total", d["total_bytes"]); ok = False
for name, r in rows.items():
    if re.search(r"\$(LT|GT|u[0-9a-f]+|C)\$|::h[0-9a-f]{16}$|^_(ZN|R[A-Z])|\.llvm\.", name):
        print("raw or half-demangled name:", name); ok = False
    # the function's own path, not a generic argument (from_elem::<alloc::alloc::Global>)
    if r["flat_bytes"] and (re.match(r"<?(__rust_|__rg_|__rdl_|alloc::alloc::|alloc::raw_vec::|"
                                     r"_rjem_|je_|mallocx)", name) or
                            re.search(r"GlobalAlloc>::|finish_grow", name)):
        print("allocation shim carries bytes:", name, r["flat_bytes"]); ok = False
sys.exit(0 if ok else 1)
PY
}

profile rustprof
names_and_bytes rustprof cum \
    'rustprof::leaky::hold_vec=2097152' 'rustprof::store::Pool<T>::fill=1048576' \
    'rustprof::Store::zeroed=3145728' 'rustprof::main::{{closure}}=524288' \
    'rustprof::inlined::hold_inline=262144'

profile rustprof_v0
names_and_bytes rustprof_v0 cum \
    'rustprof::leaky::hold_vec=2097152' '<rustprof::store::Pool<u32>>::fill=1048576' \
    '<rustprof::Store>::zeroed=3145728' 'rustprof::main::{closure#0}=524288' \
    'rustprof::inlined::hold_inline=262144'

profile rustprof_O0
names_and_bytes rustprof_O0 cum \
    'rustprof::leaky::hold_vec=2097152' 'rustprof::store::Pool<T>::fill=1048576' \
    'rustprof::Store::zeroed=3145728' 'rustprof::main::{{closure}}=524288' \
    'rustprof::inlined::hold_inline=262144'

# --show-alloc shows the Vec growth path that is otherwise hidden.
mp "$WORK/rustprof.heap" -e 'peek ^alloc::raw_vec::finish_grow$ --show-alloc --json'
assert_ok
check "--show-alloc: finish_grow under hold_vec's growth, 2097152 cum" python3 -c "
import json, sys
fn = json.loads(sys.argv[1])['functions'][0]
assert fn['cum_bytes'] == 2097152 and fn['flat_bytes'] == 0, fn
" "$OUT"

# The same names in traces --json and the folded flame graph.
mp "$WORK/rustprof.heap" -e 'traces --json'
assert_ok
check "traces: the closure's trace has the closure under rustprof::with_keep (inlined), under rustprof::main" python3 -c "
import json, sys
t = [t for t in json.loads(sys.argv[1])['traces'] if t['bytes'] == 524288][0]
f = t['frames']
i = f.index('rustprof::main::{{closure}}')
assert f[i + 1:i + 3] == ['rustprof::with_keep', 'rustprof::main'], t
" "$OUT"
mp "$WORK/rustprof_v0.heap" -e "flame $WORK/v0.folded --folded"
assert_ok
check "flame --folded (v0): <rustprof::store::Pool<u32>>::fill, 1048576 through it" \
    grep -q ';rustprof::main;<rustprof::store::Pool<u32>>::fill;.* 1048576$' "$WORK/v0.folded"

mp "$WORK/rustprof_v0.heap" -e "flame $WORK/v0.svg"
assert_ok
check "flame SVG (v0): the generic method readable, the SVG well-formed" python3 -c "
import sys, xml.dom.minidom
xml.dom.minidom.parse(sys.argv[1])
assert '&lt;rustprof::store::Pool&lt;u32&gt;&gt;::fill' in open(sys.argv[1]).read()
" "$WORK/v0.svg"

# pprof: Function.name readable, Function.system_name the mangled symbol.
pprof_text "$WORK/rustprof.heap" "$WORK/r.txt"
check "pprof: hold_vec's name and system_name" python3 - "$WORK/r.txt" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
strings = re.findall(r'^string_table: "(.*)"$', text, re.M)
fns = [(strings[int(n)], strings[int(s)]) for n, s in
       re.findall(r'^function \{\n  id: \d+\n  name: (\d+)\n  system_name: (\d+)', text, re.M)]
hold = [s for n, s in fns if n == "rustprof::leaky::hold_vec"]
assert hold and re.fullmatch(r"_ZN8rustprof5leaky8hold_vec17h[0-9a-f]{16}E", hold[0]), fns
PY
echo "rust names ok"
