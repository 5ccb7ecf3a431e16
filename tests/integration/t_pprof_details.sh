#!/usr/bin/env bash
# Details of the pprof export, decoded with protoc (pprof_json.py):
#  - each Mapping carries its object's build-id;
#  - object and byte counts are rounded so that each column adds up to
#    top's total (a sampled profile of three stacks of 5243.4 objects each
#    is 15730 objects, not 3 x 5243);
#  - ld.so's inline calloc wrapper is allocator code: pthread_create's TLS
#    allocation ends in allocate_dtv, as in traces, not in "calloc";
#  - every Location written is used by a sample (none for dropped
#    allocator frames).
. "$SRCDIR/tests/integration/lib.sh"

json() {   # json PYTHON-EXPR-ON-d: asserts it on $OUT
    python3 -c "import json,sys; d=json.loads(sys.argv[1]); assert $1, d" "$OUT"
}
export_json() {   # export_json DUMP: the pprof export of DUMP into $OUT
    mp "$1" -e "pprof $WORK/x.pb.gz"
    assert_ok
    OUT=$(python3 "$SRCDIR/tests/integration/pprof_json.py" "$SRCDIR" "$WORK/x.pb.gz") \
        || die "protoc cannot decode the export"
}

MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:0 "$TARGETS/inline_sites" "$WORK" \
    >/dev/null || die "inline_sites failed"
export_json "$WORK/inl.heap"
ID=$(readelf -n "$TARGETS/inline_sites" | awk '/Build ID:/ {print $3}')
[ -n "$ID" ] || die "inline_sites has no build-id"
check "Mapping of inline_sites carries its build-id" \
    json "any(m['filename'].endswith('/inline_sites') and m['build_id'] == '$ID' for m in d['mappings'])"
check "every Mapping of a library carries a build-id" \
    json "all(m['build_id'] for m in d['mappings'] if '.so' in m['filename'])"

# The same stacks as a sampled profile: 1 object of 100 B at one sample
# per 512 KiB unsamples to 5243.4 objects, 524338 B.
python3 - "$WORK/inl.heap" "$WORK/sampled.heap" <<'PY'
import re, sys
text = open(sys.argv[1]).read().replace("heap_v2/1\n", "heap_v2/524288\n", 1)
head, maps = text.split("\nMAPPED_LIBRARIES:", 1)
head = re.sub(r"(t\*|t0): \d+: \d+ \[0: 0\]", r"\1: 1: 100 [0: 0]", head)
open(sys.argv[2], "w").write(head + "\nMAPPED_LIBRARIES:" + maps)
PY
mp "$WORK/sampled.heap" -e 'top --json'
assert_ok
TOTAL_OBJECTS=$(python3 -c "import json,sys; print(round(json.loads(sys.argv[1])['total_objects']))" "$OUT")
TOTAL_BYTES=$(python3 -c "import json,sys; print(round(json.loads(sys.argv[1])['total_bytes']))" "$OUT")
[ "$TOTAL_OBJECTS" -eq 15730 ] || die "premise: top's total is $TOTAL_OBJECTS objects, not 15730"
export_json "$WORK/sampled.heap"
check "objects add up to top's total ($TOTAL_OBJECTS)" json "sum(s['values'][0] for s in d['samples']) == $TOTAL_OBJECTS"
check "bytes add up to top's total ($TOTAL_BYTES)" json "sum(s['values'][1] for s in d['samples']) == $TOTAL_BYTES"

# A thread's TLS comes from ld.so's calloc wrapper (inlined into allocate_dtv).
MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:0 "$TARGETS/alloc_sites" "$WORK" \
    >/dev/null || die "alloc_sites failed"
mp "$WORK/a.heap" -e 'traces --json'
OUT_TRACES=$OUT
export_json "$WORK/a.heap"
check "TLS allocation: leaf is allocate_dtv, no calloc Line" \
    json "any(s['locations'][0] == ['allocate_dtv'] and s['locations'][1] == ['_dl_allocate_tls'] for s in d['samples'])"
check "the export's leaves are traces' leaves" \
    python3 -c "import json,sys; t=json.loads(sys.argv[1]); d=json.loads(sys.argv[2])
assert sorted(x['frames'][0] for x in t['traces']) == sorted(s['locations'][0][0] for s in d['samples'])" "$OUT_TRACES" "$OUT"
check "every Location is used by a sample" \
    python3 -c "
import gzip, subprocess, sys, re
text = subprocess.run(['protoc', '--proto_path=$SRCDIR/lib/profile', '--decode=perftools.profiles.Profile',
    '$SRCDIR/lib/profile/pprof.proto'], input=gzip.open('$WORK/x.pb.gz').read(), capture_output=True, check=True).stdout.decode()
used = set(re.findall(r'^  location_id: (\d+)$', text, re.M))
written = set(re.findall(r'^location \{\n  id: (\d+)$', text, re.M))
assert written and written == used, (sorted(written - used), sorted(used - written))"
echo "pprof details ok"
