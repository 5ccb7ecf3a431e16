#!/usr/bin/env bash
# The other views on a real dump of alloc_sites: peek, tree, traces, list
# (source text from DWARF file:line), --thread, --lines/--files/--addresses,
# --focus/--ignore/--hide, dumps and load, each also as --json.
. "$SRCDIR/tests/integration/lib.sh"

MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:10 "$TARGETS/alloc_sites" "$WORK" \
    >/dev/null || die "alloc_sites failed"
B=$WORK/b.heap

json() {   # json PYTHON-EXPR-ON-d: a named check of it on $OUT
    check "json: $1" python3 -c "import json,sys; d=json.loads(sys.argv[1]); assert $1, d" "$OUT"
}

mp "$B" -e 'peek ^leak_big$'
check "peek leak_big: succeeds" mp_ok
check "peek leak_big: shows leak_big: flat 64.0 MiB (8[0-9].[0-9]%), cum 64.0 MiB" out_has '^leak_big: flat 64\.0 MiB \(8[0-9]\.[0-9]%\), cum 64\.0 MiB'
check "peek leak_big: shows 64.0 MiB 100.0%  main" out_has '^ +64\.0 MiB 100\.0%  main$'
mp "$B" -e 'peek ^main$ --json'
check "peek main --json: succeeds" mp_ok
json '[c["function"] for c in d["functions"][0]["callees"]][0] == "leak_big"'
json 'abs(sum(c["share"] for c in d["functions"][0]["callees"]) - 1) < 0.01'

mp "$B" -e 'tree --nodefraction 0.01'
check "tree --nodefraction 0.01: succeeds" mp_ok
check "tree --nodefraction 0.01: shows 64.0 MiB ...   leak_big" out_has '^ +64\.0 MiB .*   leak_big$'
# recursion: six nested recurse_alloc frames, 2 MiB each level
check "tree: the 6 recursion levels" [ "$(grep -c 'recurse_alloc$' <<<"$OUT")" -eq 6 ]
check "tree --nodefraction 0.01: does not show _dl_init" out_lacks '_dl_init'    # 80 KiB < 1%
mp "$B" -e 'tree --json'
check "tree --json: succeeds" mp_ok
json 'any(r["function"] == "_start" for r in d["roots"])'

mp "$B" -e 'traces 1'
check "traces 1: succeeds" mp_ok
check "traces 1: shows 64.0 MiB | 64 objects" out_has '^ +64\.0 MiB \| 64 objects'
check "traces 1: shows | leak_big" out_has '^ +\| leak_big$'
mp "$B" -e 'traces 2 --json'
check "traces 2 --json: succeeds" mp_ok
json 'len(d["traces"]) == 2 and d["traces"][0]["frames"][:2] == ["leak_big", "main"]'

mp "$B" -e 'list ^leak_small$'
check "list leak_small: succeeds" mp_ok
check "list leak_small: shows ROUTINE =+ leak_small in ...alloc_sites.c" out_has '^ROUTINE =+ leak_small in .*alloc_sites\.c$'
check "list leak_small: shows [78].[0-9] MiB [78].[0-9] MiB N: hold(malloc(1024), 1024);" out_has '^ +[78]\.[0-9] MiB +[78]\.[0-9] MiB +[0-9]+: +hold\(malloc\(1024\), 1024\);$'
mp "$B" -e 'list ^leak_small$ --json'
check "list leak_small --json: succeeds" mp_ok
json 'd["functions"][0]["readable"] and "malloc(1024)" in d["functions"][0]["lines"][0]["text"]'

# Thread 1 is the second thread: only thread_alloc's 4 MiB.
mp "$B" -e 'top --thread 1 --json'
check "top --thread 1 --json: succeeds" mp_ok
json 'd["rows"][0]["function"] == "thread_alloc" and abs(d["total_bytes"] - 4 * 2**20) < 2**16'
json 'not any(r["function"] == "leak_big" for r in d["rows"])'

mp "$B" -e 'top 50 --lines --json'
check "top 50 --lines --json: succeeds" mp_ok
json 'any(r["function"].startswith("leak_big ") and r["function"].endswith(tuple(":%d" % i for i in range(1, 200))) and "alloc_sites.c" in r["file"] for r in d["rows"])'
mp "$B" -e 'top --files --json'
check "top --files --json: succeeds" mp_ok
json 'd["rows"][0]["function"].endswith("alloc_sites.c")'
mp "$B" -e 'top 3 --addresses'
check "top 3 --addresses: succeeds" mp_ok
check "top 3 --addresses: shows 64.0 MiB ...  0x[0-9a-f]+ leak_big" out_has '^ +64\.0 MiB .*  0x[0-9a-f]+ leak_big$'

mp "$B" -e 'top --focus ^leak_small$ --json'
check "top --focus leak_small --json: succeeds" mp_ok
json '{r["function"] for r in d["rows"] if r["flat_bytes"]} == {"leak_small"}'
mp "$B" -e 'top 20 --ignore leak_ --json'
check "top 20 --ignore leak_ --json: succeeds" mp_ok
json 'not any(r["function"].startswith("leak_") for r in d["rows"])'
mp "$B" -e 'top --hide ^leak_big$ --json'
check "top --hide leak_big --json: succeeds" mp_ok
json 'd["rows"][0]["function"] == "main" and d["rows"][0]["flat_bytes"] > 60 * 2**20'

mp -e "load $B later" -e "load $WORK/a.heap" -e 'dumps' -e 'dumps --json'
check "load B later; load WORK/a.heap; dumps; dumps --json: succeeds" mp_ok
check "load B later; load WORK/a.heap; dumps; dumps --json: shows later N ALLOC_SITES_TOTAL" out_has "^later +[0-9]+ +$ALLOC_SITES_TOTAL"
check "load B later; load WORK/a.heap; dumps; dumps --json: shows a.heap" out_has '^a\.heap '
