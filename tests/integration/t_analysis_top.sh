#!/usr/bin/env bash
# top on real dumps of alloc_sites: the known functions with the sizes the
# program allocated (within sampling error), allocator frames stripped, and
# totals equal to jeprof --text on the same file.
. "$SRCDIR/tests/integration/lib.sh"

MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:10 "$TARGETS/alloc_sites" "$WORK" \
    >/dev/null || die "alloc_sites failed"
DUMP=$WORK/b.heap

mp "$DUMP" -e 'top'
check "top: succeeds" mp_ok
check "top: the total, as alloc_sites allocated" out_has "^Total: $ALLOC_SITES_TOTAL in use, [0-9]+ objects \\(b\\.heap, [0-9]+ stacks\\)"
check "top: leak_big, 64 MiB, first" out_has '^ +64\.0 MiB +8[0-9]\.[0-9]% +8[0-9]\.[0-9]% +64\.0 MiB +8[0-9]\.[0-9]%  leak_big$'
check "top: shows [78].[0-9] MiB ... leak_small" out_has ' [78]\.[0-9] MiB .* leak_small$'
check "top: shows 4.0 MiB ... thread_alloc" out_has ' 4\.0 MiB .* thread_alloc$'
check "top: does not show prof_backtrace|malloc_default|je_|imalloc" out_lacks 'prof_backtrace|malloc_default|je_|imalloc'

mp "$DUMP" -e 'top 20 --json'
check "top 20 --json: succeeds" mp_ok
top_json_checks() {
python3 - "$OUT" <<'PY'
import json, sys
d = json.loads(sys.argv[1])
MiB = 1048576.0
rows = {r["function"]: r for r in d["rows"]}
def near(name, key, want, tol):
    got = rows[name][key]
    assert abs(got - want) <= tol * want, f"{name} {key} {got} vs {want}"
near("leak_big", "flat_bytes", 64 * MiB, 0.01)
near("leak_big", "cum_bytes", 64 * MiB, 0.01)
near("leak_small", "flat_bytes", 8 * MiB, 0.05)
# 1 KiB blocks sampled every 1 KiB: jeprof's unsampling (which memprof
# matches exactly, checked below) reads about 3% high here (12 runs: mean
# 8430, sd about 60), so 5% was missed about once in a few hundred runs.
near("leak_small", "flat_objects", 8192, 0.08)
near("thread_alloc", "flat_bytes", 4 * MiB, 0.01)
# recursion: recurse_alloc holds 2 MiB once, not once per level
near("recurse_alloc", "cum_bytes", 2 * MiB, 0.01)
near("main", "cum_bytes", 74 * MiB, 0.02)
assert rows["main"]["flat_bytes"] == 0
flats = [r["flat_bytes"] for r in d["rows"]]
assert flats == sorted(flats, reverse=True), "rows not sorted by flat"
assert set(d["rows"][0]) >= {"function", "flat_bytes", "flat_objects", "cum_bytes", "cum_objects"}
assert not any("prof_backtrace" in n or n.startswith("je_") for n in rows)
print(d["total_bytes"], d["total_objects"])
PY
}
check "top --json: the figures, order and fields" top_json_checks
read -r TOTAL_BYTES TOTAL_OBJECTS < <(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(d["total_bytes"], d["total_objects"])' "$OUT")

# The same totals as jeprof (which prints MB = bytes / 1048576, or exact
# with --show_bytes).
JB=$(jeprof --text --show_bytes "$TARGETS/alloc_sites" "$DUMP" 2>/dev/null | awk '/^Total:/ {print $2}')
JO=$(jeprof --text --inuse_objects "$TARGETS/alloc_sites" "$DUMP" 2>/dev/null | awk '/^Total:/ {print $2}')
[ -n "$JB" ] && [ -n "$JO" ] || die "jeprof printed no total"
check "the same totals as jeprof" python3 -c "
import sys
mb, mo, jb, jo = map(float, sys.argv[1:])
assert abs(mb - jb) <= 0.001 * jb, ('bytes', mb, jb)
assert abs(mo - jo) <= 0.001 * jo + 1, ('objects', mo, jo)
" "$TOTAL_BYTES" "$TOTAL_OBJECTS" "$JB" "$JO"

# jeprof's MB figure of the text header, and memprof's exact bytes.
JMB=$(jeprof --text "$TARGETS/alloc_sites" "$DUMP" 2>/dev/null | awk '/^Total:/ {print $2}')
mp "$DUMP" -e 'top 3 --bytes'
check "top 3 --bytes: succeeds" mp_ok
check "top --bytes: the exact total matches jeprof's MB" python3 -c "
import sys, re
m = re.search(r'^Total: (\d+) in use', sys.argv[1], re.M)
assert m and abs(int(m.group(1)) / 1048576 - float(sys.argv[2])) < 0.05 + 0.001 * float(sys.argv[2])
" "$OUT" "$JMB"
check "top 3 --bytes: shows 67108864" out_has '^ +67108864 '

# --cum puts main's callers first; --objects ranks leak_small first.
mp "$DUMP" -e 'top 3 --cum'
check "top 3 --cum: succeeds" mp_ok
check "top 3 --cum: does not show leak_small" out_lacks 'leak_small$'
mp "$DUMP" -e 'top 1 --objects'
check "top 1 --objects: succeeds" mp_ok
check "top 1 --objects: shows N 9[0-9].[0-9]% ... leak_small" out_has '^ +[0-9]+ +9[0-9]\.[0-9]% .* leak_small$'
