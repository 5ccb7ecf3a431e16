#!/usr/bin/env python3
"""pprof_json.py - a pprof export (.pb.gz) as JSON for the tests, through
`protoc --decode` against lib/profile/pprof.proto (no protobuf module needed).

    pprof_json.py SRCDIR FILE.pb.gz

Prints {"samples": [{"values": [...], "locations": [[fn, ...], ...]}],
"locations": [{"id", "lines": [fn, ...]}], "mappings": [{"filename",
"build_id"}], "period": N}; a location's lines and a sample's locations
innermost first, functions by name."""
import gzip, json, re, subprocess, sys

srcdir, path = sys.argv[1], sys.argv[2]
text = subprocess.run(
    ["protoc", "--proto_path=%s/lib/profile" % srcdir, "--decode=perftools.profiles.Profile",
     "%s/lib/profile/pprof.proto" % srcdir],
    input=gzip.open(path).read(), capture_output=True, check=True).stdout.decode()

def parse(lines):
    """protoc's text format: `key: value` and `key { ... }`, repeated keys as lists."""
    node = {}
    for line in lines:
        line = line.strip()
        if line == "}":
            return node
        if line.endswith("{"):
            value = parse(lines)
            key = line[:-1].strip()
        else:
            key, _, raw = line.partition(": ")
            value = json.loads(raw) if raw.startswith('"') else int(raw) if re.fullmatch(r"-?\d+", raw) else raw
        node.setdefault(key, []).append(value)
    return node

pb = parse(iter(text.splitlines()))
strings = pb["string_table"]
def one(d, k, default=0):
    return d.get(k, [default])[0]
functions = {one(f, "id"): strings[one(f, "name")] for f in pb.get("function", [])}
locations = {one(l, "id"): [functions[one(ln, "function_id")] for ln in l.get("line", [])]
             for l in pb.get("location", [])}
print(json.dumps({
    "period": one(pb, "period"),
    "samples": [{"values": s.get("value", []),
                 "locations": [locations[i] for i in s.get("location_id", [])]}
                for s in pb.get("sample", [])],
    "locations": [{"id": i, "lines": ln} for i, ln in locations.items()],
    "mappings": [{"filename": strings[one(m, "filename")],
                  "build_id": strings[one(m, "build_id")]} for m in pb.get("mapping", [])],
}))
