#!/usr/bin/env python3
"""gen_mallctl_table.py - writes allocator/jemalloc/mallctl_names.c, memprof's table of
jemalloc's mallctl names, from the MALLCTL NAMESPACE section of jemalloc(3)
(Debian's libjemalloc-dev installs it as /usr/share/man/man3/jemalloc.3.gz).

The page is the only complete statement of each name's type and access, so
the table is generated from it rather than typed: `make mallctl-table`
regenerates it, and tests/unit/test_mallctl.c checks that the committed file
is what this script makes of the installed page.

usage: gen_mallctl_table.py [PAGE] > allocator/jemalloc/mallctl_names.c
"""
import gzip
import re
import sys

DEFAULT_PAGE = "/usr/share/man/man3/jemalloc.3.gz"

# The page's type words and memprof's names for them (allocator/jemalloc/mallctl.h).
TYPES = {
    "bool": "MALLCTL_BOOL",
    "unsigned": "MALLCTL_UNSIGNED",
    "uint32_t": "MALLCTL_U32",
    "size_t": "MALLCTL_SIZE",
    "ssize_t": "MALLCTL_SSIZE",
    "uint64_t": "MALLCTL_U64",
    "int64_t": "MALLCTL_I64",
    "const char *": "MALLCTL_STRING",
    "void": "MALLCTL_VOID",
    "uint64_t *": "MALLCTL_POINTER",
    "extent_hooks_t *": "MALLCTL_POINTER",
    "void*": "MALLCTL_POINTER",
    "void *": "MALLCTL_POINTER",
}

ACCESS = {
    "r-": "MALLCTL_R",
    "-w": "MALLCTL_W",
    "rw": "MALLCTL_RW",
    "--": "MALLCTL_ACTION",
    "r- or -w": "MALLCTL_R_OR_W",
}

HEADER = re.compile(r"^(?P<name>\S+) \((?P<types>.*)\) (?P<access>r- or -w|r-|-w|rw|--)"
                    r"(?: \[(?P<requires>[^\]]*)\])?$")
COUNTER = re.compile(r"^\((?P<type>[^)]*)\): (?P<doc>.*)$")
# A version the page credits a name with; jemalloc 5.3's page has none, but
# a later page may ("... (since 5.4.0)").
SINCE = re.compile(r"\b(?:since|added in|introduced in) (?:jemalloc )?(\d+\.\d+(?:\.\d+)?)")


def plain(line):
    """troff escapes to plain text."""
    line = line.replace("\\&", "").replace("\\-", "-").replace("\\*(Aq", "'")
    line = line.replace("\\(lq", '"').replace("\\(rq", '"').replace("\\e", "\\")
    return re.sub(r"\\f[BIRP]", "", line)


def first_sentence(words):
    """Up to the first full stop that ends a sentence, at most 160 characters."""
    text = re.sub(r"\s+", " ", " ".join(w for w in words if w)).strip()
    m = re.match(r"(.*?\.)(?: (?=[A-Z])|$)", text)
    s = m.group(1) if m else text
    return s if len(s) <= 160 else s[:157].rstrip() + "..."


def read_section(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        lines = f.read().split("\n")
    version = ""
    for line in lines:
        if line.startswith(".TH"):
            fields = re.findall(r'"([^"]*)"', line)
            version = next((x for x in fields if x.startswith("jemalloc ")), "")
            break
    start = lines.index('.SH "MALLCTL NAMESPACE"')
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith(".SH "))
    return version, lines[start + 1:end]


def parse(section):
    """[(name, types, access, requires, description lines)] in page order."""
    entries = []
    i = 0
    while i < len(section):
        if section[i] == ".PP" and i + 1 < len(section):
            m = HEADER.match(plain(section[i + 1]))
            if m and "(" in section[i + 1]:
                depth, j, desc = 0, i + 2, []
                while j < len(section):
                    if section[j].startswith(".RS"):
                        depth += 1
                    elif section[j].startswith(".RE"):
                        depth -= 1
                        if depth == 0:
                            break
                    else:
                        desc.append(section[j])
                    j += 1
                entries.append((m.group("name").rstrip(";"), m.group("types"),
                                m.group("access"), m.group("requires"), desc))
                i = j
        i += 1
    return entries


def counters(desc):
    """The {counter} list given in a description: [(name, type, doc)]."""
    out = []
    for k, line in enumerate(desc):
        m = re.match(r"^\\fI(\w+)\\fR$", line)
        if m and k + 1 < len(desc):
            c = COUNTER.match(plain(desc[k + 1]))
            if c:
                out.append((m.group(1), re.sub(r"\s+", " ", c.group("type")).strip(),
                            first_sentence([c.group("doc")])))
    return out


def description(desc):
    return [plain(l) for l in desc if not l.startswith(".")]


def expand(entries):
    """Rows of the table: {counter} and {extent_type} spelled out."""
    counter_list = next((counters(d) for (_, t, _, _, d) in entries if counters(d)), [])
    rows = []
    for name, types, access, requires, desc in entries:
        text = description(desc)
        doc = first_sentence(text)
        since = None
        m = SINCE.search(" ".join(text))
        if m:
            since = m.group(1)
        req = plain(requires).strip() if requires else None
        if "{counter}" in name:
            for cname, ctype, cdoc in counter_list:
                rows.append((name.replace("{counter}", cname), ctype, ctype,
                             access, req, since, cdoc))
            continue
        if "{extent_type}" in name:
            m = re.search(r"one of ([a-z, ]+)", " ".join(text))
            kinds = [k for k in re.split(r",\s*(?:or\s+)?|\s+or\s+", m.group(1).strip()) if k]
            for kind in kinds:
                rows.append((name.replace("{extent_type}", kind), types, types,
                             access, req, since, doc))
            continue
        parts = [re.sub(r"\s+", " ", plain(p)).strip() for p in plain(types).split(",")]
        rows.append((name, parts[0], parts[-1], access, req, since, doc))
    return rows


def c_string(s):
    if s is None:
        return "NULL"
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else DEFAULT_PAGE
    version, section = read_section(path)
    entries = parse(section)
    rows = expand(entries)
    out = sys.stdout
    out.write("/* mallctl_names.c - GENERATED by tools/gen_mallctl_table.py from the\n"
              " * MALLCTL NAMESPACE section of jemalloc(3) (%s): every\n"
              " * mallctl name, its type, access, build requirement, the version that\n"
              " * brought it when the page says, and the first sentence of its\n"
              " * description.  Do not edit: run `make mallctl-table`. */\n"
              % (version or "unknown version"))
    out.write('#include "allocator/jemalloc/mallctl.h"\n\n')
    out.write("const char mallctl_table_source[] = %s;\n" % c_string(version))
    out.write("const unsigned mallctl_table_page_entries = %d;\n\n" % len(entries))
    out.write("const struct mallctl_info mallctl_table[] = {\n")
    for name, rtype, wtype, access, req, since, doc in rows:
        for t in (rtype, wtype):
            if t not in TYPES:
                sys.exit("gen_mallctl_table: unknown type '%s' for %s" % (t, name))
        out.write("    {%s, %s, %s, %s, %s, %s,\n     %s},\n"
                  % (c_string(name), TYPES[rtype], TYPES[wtype], ACCESS[plain(access)],
                     c_string(req), c_string(since), c_string(doc)))
    out.write("    {NULL, 0, 0, 0, NULL, NULL, NULL},\n};\n")


if __name__ == "__main__":
    main()
