# The heap arena by arena (issue 36 item 1): 'memory' and 'memory --json'
# ("heap_arenas") give each arena's in use, free and resident bytes.
# glibc_arenas (many_arenas with glibc malloc alone): 4 threads each
# allocate and write 16 MiB in 4000-byte blocks, each in a thread arena of
# its own: each arena's in-use bytes and its resident bytes, measured from
# the heap mappings tied to it, are within 10 % of 16 MiB, and those heaps
# are the heap's category (not stacks: a heap just above another's
# PROT_NONE reserve is laid out as a stack is).  With 12 threads the
# default lines show the largest few and the rest in one line; --arenas
# lists each.  many_arenas with jemalloc (narenas:5): each thread's arena
# holds its 16 MiB, one thread each.  tcmalloc_minimal_freed: the page
# heap's free bytes, then after 'purge' its released bytes.  Every time,
# the categories still add up to rss_bytes exactly.  serve's /metrics
# gives glibc's arenas' measured total, its heap category.
. "$SRCDIR/tests/integration/lib.sh"

MIB=1048576
ge() { [ "$1" -ge "$2" ]; }
export JF_DEFS='
A = d.get("heap_arenas", [])
def near(v, want):
    return abs(v - want) * 10 <= want
def adds_up():
    return sum(c["bytes"] for c in d["categories"]) == d["rss_bytes"]
def key(k):
    return sum(c["bytes"] for c in d["categories"] if c["key"] == k)
def threads():
    return [a for a in A if isinstance(a["arena"], int) and a["arena"] > 0]
'

CONF= start_target glibc_arenas 4 16
mp -p "$PID" -e 'memory --json'
check "glibc: memory --json runs" mp_ok
check "glibc: 5 arenas (main and one per thread)" [ "$(jf 'd["heap_arenas_count"]')" = 5 ]
check "glibc: each thread arena holds 16 MiB in use (within 10 %)" \
    [ "$(jf 'len(threads()) == 4 and all(near(a["in_use"], 16 * 1048576) for a in threads())')" = True ]
check "glibc: each thread arena's resident bytes measured from its heap, 16 MiB (within 10 %)" \
    [ "$(jf 'all(a["resident_measured"] and near(a["resident"], 16 * 1048576) and a["heaps"] == 1 for a in threads())')" = True ]
check "glibc: nothing freed, so the free resident bytes (at least) are under 1 MiB per thread arena" \
    [ "$(jf 'all(0 <= a["free_resident_at_least"] < 1048576 for a in threads())')" = True ]
check "glibc: the main arena measured from [heap]" \
    [ "$(jf '[a["resident_measured"] for a in A if a["arena"] == 0] == [True]')" = True ]
check "glibc: the categories add up to rss_bytes exactly" [ "$(jf 'adds_up()')" = True ]
check "glibc: the heap's category is the arenas' measured resident bytes" \
    [ "$(jf 'key("heap") == sum(a.get("resident", 0) for a in A if isinstance(a["arena"], int))')" = True ]
check "glibc: the thread heaps are not taken for stacks" \
    [ "$(jf 'key("unseen_stacks") < 1048576 and key("heap") >= 64 * 1048576')" = True ]
mp -p "$PID" -e memory
check "glibc: memory shows the heap by arena" out_has '^heap by arena \(glibc malloc: 5 arenas\)'
check "glibc: each thread arena a line, measured" \
    [ "$(grep -Ec '^  [1-4] +1[5-7]\.[0-9] MiB .* measured$' <<<"$OUT")" = 4 ]

# serve's /metrics measures glibc's arenas the same way: their total,
# and the heap category is it.
start_serve --target "exe=$TARGETS/glibc_arenas"
http GET "/metrics?pid=$PID"
metric() { awk -v m="$1" '$1 ~ "^" m "[{]" { print $2 }' "$WORK/body"; }
check "/metrics: memprof_heap_arenas is 5" [ "$(metric memprof_heap_arenas)" = 5 ]
check "/metrics: the arenas' measured resident bytes hold the 64 MiB" \
    ge "$(metric memprof_heap_resident_measured_bytes)" $((64 * MIB))
check "/metrics: the heap category is the measured figure" \
    [ "$(awk '$1 ~ /category="heap"/ { print $2 }' "$WORK/body")" = "$(metric memprof_heap_resident_measured_bytes)" ]

CONF= start_target glibc_arenas 12 2
mp -p "$PID" -e memory -e 'memory --arenas'
check "glibc, 13 arenas: memory shows four and the rest in one line" \
    out_has '^  9 more: .* MiB in use, .* MiB resident'
check "glibc, 13 arenas: memory --arenas lists each" \
    [ "$(grep -Ec '^  [0-9]+( \(main\))? .* measured$' <<<"$OUT")" = $((4 + 13)) ]

CONF=narenas:5 start_target many_arenas 4 16
mp -p "$PID" -e 'memory --json'
check "jemalloc: memory --json runs" mp_ok
check "jemalloc: four arenas of one thread each hold 16 MiB allocated (within 10 %)" \
    [ "$(jf 'len([a for a in A if a["threads"] == 1 and near(a["in_use"], 16 * 1048576)]) == 4')" = True ]
check "jemalloc: each arena's resident (its own figure) covers its active pages and metadata" \
    [ "$(jf 'all(a["resident"] >= a["active"] and a["metadata"] > 0 and not a["resident_measured"] for a in A)')" = True ]
check "jemalloc: the arenas' allocated bytes add up to stats.allocated (within 10 %)" \
    [ "$(jf 'near(sum(a["in_use"] for a in A), d["jemalloc_allocated"])')" = True ]
check "jemalloc: the categories add up to rss_bytes exactly" [ "$(jf 'adds_up()')" = True ]

CONF= start_target tcmalloc_minimal_freed
kept=$(awk '/^pageheap_free/ {print $2}' "$TARGET_OUT")
mp -p "$PID" -e 'memory --json'
check "tcmalloc: the page heap's free bytes, resident" \
    [ "$(jf '[a["arena"] for a in A] == ["page heap"] and A[0]["pageheap_free"] * 10 >= '"$kept"' * 9 and A[0]["released"] == 0')" = True ]
check "tcmalloc: the categories add up to rss_bytes exactly" [ "$(jf 'adds_up()')" = True ]
mp -p "$PID" -e purge -e 'memory --json'
check "tcmalloc: after purge the page heap's pages are released" \
    [ "$(jf 'A[0]["released"] * 10 >= '"$kept"' * 9 and A[0]["pageheap_free"] < 1048576')" = True ]
mp -p "$PID" -e memory
check "tcmalloc: memory's page heap line says what was released" \
    out_has '^  page heap .* its own, released [0-9]+\.[0-9] MiB$'
