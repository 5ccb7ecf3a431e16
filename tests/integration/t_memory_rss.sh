# Where RSS is (issue 36 item 1): 'memory --json' gives rss_bytes and
# categories whose bytes add up to it exactly (one read of smaps), checked
# here from the JSON.  thread_stacks (jemalloc) has 20 threads that each
# touched 256 KiB of their stack, blocked: their stacks are found by their
# stack pointers; it mapped 32 MiB with mmap: the anonymous memory beyond
# jemalloc's figure holds it.  known_heap (100 MiB in jemalloc), whose
# stats.resident is above its anonymous RSS: no line says a false 0 any
# more, the anonymous memory is one named category that cannot be split.
# glibc_live with memprof's sampler in: the sampler's region is a
# category of its own.  serve's /metrics gives the categories by key,
# adding up the same way.
. "$SRCDIR/tests/integration/lib.sh"

MIB=1048576
ge() { [ "$1" -ge "$2" ]; }
export JF_DEFS='
cats = d["categories"]
def cat(prefix):
    return sum(c["bytes"] for c in cats if c["name"].startswith(prefix))
def adds_up():
    return sum(c["bytes"] for c in cats) == d["rss_bytes"] and all(c["bytes"] > 0 for c in cats)
'

start_target thread_stacks 20
mp -p "$PID" -e 'memory --json'
check "memory --json runs" [ "$RC" -eq 0 ]
check "thread_stacks: the categories add up to rss_bytes exactly" [ "$(jf 'adds_up()')" = True ]
check "thread_stacks: rss_bytes is within 10 % of VmRSS" \
    [ "$(jf 'abs(d["rss_bytes"] - d["rss"]) * 10 <= d["rss"]')" = True ]
check "the 20 threads' stacks found by their stack pointers" \
    [ "$(jf '[c["name"] for c in cats if c["name"].startswith("thread stacks")][0]')" = \
      "thread stacks (20 threads found by their stack pointer)" ]
check "the 20 stacks hold >= 20 x 256 KiB" ge "$(jf 'cat("thread stacks")')" $((20 * 256 * 1024))
check "every thread gave its stack pointer" [ "$(jf 'd["threads"] == d["threads_with_sp"] == 21')" = True ]
check "the 32 MiB mmap is in the anonymous memory not jemalloc's (>= 28 MiB)" \
    ge "$(jf 'cat("anonymous, not jemalloc")')" $((28 * MIB))
check "jemalloc's heap: active pages, then metadata and dirty pages, adding up to stats.resident" \
    [ "$(jf 'cat("jemalloc heap") == d["jemalloc_resident"] and cat("jemalloc heap (its own figure: at most): active pages") == d["jemalloc_active"] and cat("jemalloc heap (its own figure: at most): metadata and unused dirty pages") > 0')" = True ]
check "libc is a file category" [ "$(jf 'any(c["name"].startswith("file: ") and c["name"].endswith("/libc.so.6") for c in cats)')" = True ]
check "categories carry stable keys" \
    [ "$(jf '[c["key"] for c in cats if c["name"].startswith("thread stacks")][0]')" = thread_stacks ]
mp -p "$PID" -e memory
check "memory: where RSS is" out_has '^where RSS is \(one read of smaps: [0-9.]+ MiB'
check "memory: the thread stacks line" out_has '^ +[0-9.]+ MiB  thread stacks \(20 threads found by their stack pointer\)$'
check "memory: what is not jemalloc's, as a lower bound" out_has '^anonymous, not jemalloc +[0-9.]+ MiB  \(at least'

# serve's /metrics reads the same figures: every category key, adding up
start_serve --target "exe=$TARGETS/thread_stacks"
http GET "/metrics?pid=$PID"
check "/metrics: 200" status_is 200
rss_cat() {   # the samples of memprof_process_rss_category_bytes: "key value" lines
    sed -n "s/^memprof_process_rss_category_bytes{pid=\"$PID\".*,category=\"\([a-z_]*\)\"} \([0-9]*\)\$/\1 \2/p" "$WORK/body"
}
check "/metrics: the ten category keys" [ "$(rss_cat | wc -l)" = 10 ]
check "/metrics: the categories add up to memprof_process_rss_accounted_bytes" \
    [ "$(rss_cat | awk '{ s += $2 } END { print s }')" = \
      "$(awk -v pid="$PID" 'index($1, "memprof_process_rss_accounted_bytes{pid=\"" pid "\"") == 1 { print $2 }' "$WORK/body")" ]
check "/metrics: thread_stacks >= 20 x 256 KiB" ge "$(rss_cat | awk '$1 == "thread_stacks" { print $2 }')" $((20 * 256 * 1024))
check "thread_stacks untouched" untouched "$PID"

CONF=dirty_decay_ms:-1,muzzy_decay_ms:-1 start_target known_heap
mp -p "$PID" -e 'memory --json'
check "known_heap: the categories add up to rss_bytes exactly" [ "$(jf 'adds_up()')" = True ]
if [ "$(jf 'd["jemalloc_resident"] > d["anonymous"]')" = True ]; then
    check "known_heap: stats.resident above the anonymous RSS: no anonymous_not_jemalloc of 0" \
        [ "$(jf '"anonymous_not_jemalloc" not in d and d["jemalloc_resident_over_anonymous"] == d["jemalloc_resident"] - d["anonymous"]')" = True ]
    check "known_heap: the anonymous memory is one named category, not split" \
        ge "$(jf 'cat("anonymous: jemalloc heap and other mmaps, not told apart")')" $((100 * MIB))
    mp -p "$PID" -e memory
    check "known_heap: memory says why it cannot split, not 0.0 MiB" \
        out_has "^anonymous, not jemalloc unknown: jemalloc's heap figure is [0-9.]+ MiB above the anonymous RSS"
else
    check "known_heap: anonymous_not_jemalloc is anonymous - resident" \
        [ "$(jf 'd["anonymous_not_jemalloc"] == d["anonymous"] - d["jemalloc_resident"]')" = True ]
    check "known_heap: jemalloc's heap holds the 100 MiB" ge "$(jf 'cat("jemalloc heap")')" $((100 * MIB))
fi
check "known_heap untouched" untouched "$PID"

CONF= start_target glibc_live
mp -p "$PID" -e 'prof on' -e 'memory --json'
check "glibc_live, sampler in: the categories add up to rss_bytes exactly" [ "$(jf 'adds_up()')" = True ]
check "memprof's sampler region is a category of its own" ge "$(jf 'cat("memprof'"'"'s sampler region")')" 4096
check "glibc malloc's heap set against the anonymous memory" \
    [ "$(jf 'any("glibc malloc" in c["name"] for c in cats)')" = True ]
check "glibc_live untouched" untouched "$PID"
