#!/usr/bin/env bash
# diff between two dumps of alloc_sites: leak_big grew by 48 MiB, the
# freed temp_buffers shrank by 4 MiB, unchanged leak_small is absent;
# 'top --base' says the same; --json has the documented shape.
. "$SRCDIR/tests/integration/lib.sh"

MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:10 "$TARGETS/alloc_sites" "$WORK" \
    >/dev/null || die "alloc_sites failed"
A=$WORK/a.heap B=$WORK/b.heap

mp "$A" "$B" -e 'diff'
check "diff runs" mp_ok
check "diff: the growth, from a to b" \
    out_has '^Growth: \+4[34]\.[0-9] MiB, [-+][0-9]+ objects in use from a\.heap to b\.heap'
# First row: the growing function, with its share of B's total.
first=$(grep -A1 '^ *flat' <<<"$OUT" | tail -1)
check "diff: first row is leak_big +48 MiB" grep -Eq '^ +\+48\.0 MiB +6[0-9]\.[0-9]% .* leak_big$' <<<"$first"
check "diff: temp_buffers shrank by 4 MiB" out_has '^ +-4\.0 MiB +-5\.[0-9]% .* temp_buffers$'
check "diff: unchanged leak_small is absent" out_lacks 'leak_small$'

# Names in either order of loading; one name means "that one and the latest".
mp "$A" "$B" -e 'diff a.heap b.heap --json' -e 'diff a.heap --json' -e 'top --base a.heap --json'
check "diff --json, diff NAME, top --base run" mp_ok
diff_json_checks() {
python3 - "$OUT" <<'PY'
import json, sys
dec = json.JSONDecoder()
text, docs, i = sys.argv[1], [], 0
while i < len(text):
    while i < len(text) and text[i].isspace():
        i += 1
    if i >= len(text):
        break
    d, i = dec.raw_decode(text, i)
    docs.append(d)
assert len(docs) == 3, len(docs)
MiB = 1048576.0
for d in docs:
    assert d["dump"] == "b.heap" and d["base"] == "a.heap", d.get("base")
    rows = {r["function"]: r for r in d["rows"]}
    assert d["rows"][0]["function"] == "leak_big"
    assert abs(rows["leak_big"]["flat_bytes"] - 48 * MiB) < 0.01 * 48 * MiB
    assert abs(rows["temp_buffers"]["flat_bytes"] + 4 * MiB) < 0.01 * 4 * MiB
    assert rows["temp_buffers"]["flat_objects"] < 0
    assert abs(d["growth_bytes"] - 44 * MiB) < 0.02 * 44 * MiB
    assert d["total_bytes"] > 70 * MiB   # B's total, for the percentages
assert docs[0]["rows"] == docs[1]["rows"] == docs[2]["rows"]
PY
}
check "diff --json: the documented shape and figures, the same three ways" diff_json_checks

# Reversed: what shrank from b to a.
mp "$A" "$B" -e 'diff b.heap a.heap'
check "reversed diff runs" mp_ok
check "reversed diff: leak_big shrank by 48 MiB" out_has '^ +-48\.0 MiB .* leak_big$'
