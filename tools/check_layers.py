#!/usr/bin/env python3
"""check_layers.py - the layering rule of docs/design.md, checked on the tree.

Floors, from the bottom: lib/ < attach/ < allocator/ < session/ < repl/
(and serve/ beside repl/) < main/ (the entry that picks a front end).  A file may include headers of its own floor and
of lower ones, never of a higher one; lib/ sub-folders have their own order
(base < proc, mallinfo, seccomp, elf < profile < symbolize < analysis < report).  A module is a
.c/.h pair (or a lone file; NAME_internal.h belongs to NAME); no two modules
may include each other, directly or around a circle.  Only attach/ includes
the architecture's code (attach/arch/).  Prints each violation and exits 1, or prints a summary
and exits 0.
usage: check_layers.py [SRCDIR]
"""
import os
import re
import sys

FLOORS = ["lib", "attach", "allocator", "session", "repl", "serve", "main"]
LIB_ORDER = ["base", "proc", "mallinfo", "seccomp", "elf", "profile", "symbolize", "analysis", "report"]
# repl and serve are peers: neither may include the other.
PEERS = {("repl", "serve"), ("serve", "repl")}


def rank(path):
    parts = path.split("/")
    floor = FLOORS.index(parts[0])
    sub = LIB_ORDER.index(parts[1]) if parts[0] == "lib" and len(parts) > 2 else 0
    return (floor, sub)


def module(path):
    """A module is a .c/.h pair; NAME_internal.h is the private half of NAME."""
    base = os.path.splitext(path)[0]
    return base[:-len("_internal")] if base.endswith("_internal") else base


def private_header(path):
    """A folder's internal.h: what its files share and nothing else sees."""
    return os.path.basename(path) == "internal.h"


def main():
    top = sys.argv[1] if len(sys.argv) > 1 else "."
    files = []
    for floor in FLOORS:
        for root, _, names in os.walk(os.path.join(top, floor)):
            files += [os.path.relpath(os.path.join(root, n), top)
                      for n in names if n.endswith((".c", ".h"))]
    problems = []
    edges = {}
    inc = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
    for f in sorted(files):
        with open(os.path.join(top, f), encoding="utf-8") as fh:
            text = fh.read()
        for h in inc.findall(text):
            if h.split("/")[0] not in FLOORS:
                continue            # generated (pprof.pb-c.h) or tests
            if h.startswith("attach/arch/") and not f.startswith("attach/"):
                problems.append("%s includes %s: architecture code is the engine's alone" % (f, h))
            a, b = f.split("/")[0], h.split("/")[0]
            if (a, b) in PEERS:
                problems.append("%s includes %s: the front ends are peers" % (f, h))
            elif rank(h) > rank(f):
                problems.append("%s includes %s, a higher floor" % (f, h))
            # a folder's private header includes the public halves it
            # shares among that folder's files: not an edge between modules
            if private_header(f) and os.path.dirname(h) == os.path.dirname(f):
                continue
            if module(h) != module(f):
                edges.setdefault(module(f), set()).add(module(h))
    # circles between modules (Tarjan's strongly connected components)
    index, low, stack, on, sccs = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                sccs.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    for comp in sccs:
        problems.append("include circle: " + " -> ".join(comp))
    for p in problems:
        print(p)
    if problems:
        return 1
    print("layers: %d files, %d modules, no upward include, no circle" %
          (len(files), len({module(f) for f in files})))
    return 0


if __name__ == "__main__":
    sys.exit(main())
