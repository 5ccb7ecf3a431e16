#!/usr/bin/env python3
# gen_series.py - a long synthetic series of heap profiles for the trend
# benchmark and the memory-bound tests: N dumps (heap_v2, as jemalloc
# writes them) made from one real dump BASE, one a minute (file times set
# so), every stack churning at random around its size in BASE, and one
# stack (the leak) growing steadily.  With --run, the directory is also a
# saved run (manifest.json as 'profile save' writes it, series NAME).
#
#   gen_series.py BASE DIR N [--leak-stack K] [--run NAME] [--seed S]
#
# The output is deterministic for a given BASE, N and seed.
import argparse
import json
import os
import random
import sys
import time


def read_base(path):
    """The stacks of BASE as (header line, bytes per object), and the
    MAPPED_LIBRARIES section as it is."""
    with open(path) as f:
        text = f.read()
    body, sep, maps = text.partition("\nMAPPED_LIBRARIES:\n")
    if not sep:
        sys.exit("gen_series: %s has no MAPPED_LIBRARIES section" % path)
    lines = body.split("\n")
    if not lines[0].startswith("heap_v2/"):
        sys.exit("gen_series: %s is not a heap_v2 profile" % path)
    stacks = []
    i = 0
    while i < len(lines):
        if lines[i].startswith("@ "):
            # "  t*: OBJECTS: BYTES [A: B]"
            fields = lines[i + 1].split()
            objs, size = int(fields[1].rstrip(":")), int(fields[2])
            stacks.append((lines[i], max(16, size // max(objs, 1))))
        i += 1
    return lines[0], stacks, maps


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("base")
    ap.add_argument("dir")
    ap.add_argument("n", type=int)
    ap.add_argument("--leak-stack", type=int, default=777)
    ap.add_argument("--run")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    header, stacks, maps = read_base(a.base)
    rng = random.Random(a.seed)
    os.makedirs(a.dir, exist_ok=True)
    # Times from now on: the objects the dumps name (built before) are then
    # older than every dump, so no reading warns they changed since.
    t0 = int(time.time())
    entries = []
    for d in range(a.n):
        out = []
        tot_o = tot_b = 0
        for k, (head, size) in enumerate(stacks):
            if k == a.leak_stack:
                objs = 1 + 400 * d             # the steady leak
            else:
                objs = rng.randrange(0, 4)     # churn
            b = objs * size
            tot_o += objs
            tot_b += b
            out.append("%s\n  t*: %d: %d [0: 0]\n  t0: %d: %d [0: 0]\n" % (head, objs, b, objs, b))
        name = "dump%04d" % (d + 1)
        path = os.path.join(a.dir, name + ".heap")
        with open(path, "w") as f:
            f.write("%s\n  t*: %d: %d [0: 0]\n  t0: %d: %d [0: 0]\n" %
                    (header, tot_o, tot_b, tot_o, tot_b))
            f.write("".join(out))
            f.write("\nMAPPED_LIBRARIES:\n")
            f.write(maps)
        os.utime(path, (t0 + 60 * d, t0 + 60 * d))
        entries.append({"name": name, "file": name + ".heap", "taken_at": t0 + 60 * d,
                        "peak": False})
    if a.run:
        manifest = {"kind": "memprof run", "series": a.run, "every": 60.0,
                    "objects": [], "dumps": entries}
        with open(os.path.join(a.dir, "manifest.json"), "w") as f:
            json.dump(manifest, f, indent=2)


if __name__ == "__main__":
    main()
