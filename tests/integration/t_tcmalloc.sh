# gperftools tcmalloc (Debian's 2.10), full and minimal: a process that
# freed most of 300 MiB, which tcmalloc keeps resident in its page heap.
# 'info' names the library, 'stats' shows MallocExtension's properties and
# tcmalloc's own report, 'purge' (MallocExtension_ReleaseFreeMemory) gives
# the page heap back to the system, and the process runs on untouched.
. "$SRCDIR/tests/integration/lib.sh"

MIB=$((1024 * 1024))
for name in tcmalloc_freed tcmalloc_minimal_freed; do
    CONF= start_target "$name"
    kind=$(awk '/^allocator/ {print $2}' "$TARGET_OUT")
    kept=$(awk '/^pageheap_free/ {print $2}' "$TARGET_OUT")
    lib=libtcmalloc; [ "$kind" = tcmalloc_minimal ] && lib=libtcmalloc_minimal

    mp -p "$PID" -e info -e 'info --json'
    check "$kind: info names it" out_has "^allocator +gperftools $kind in /.*$lib\\.so"
    check "$kind: info --json" [ "$(jf 'd["allocator"]["name"]')" = "$kind" ]

    mp -p "$PID" -e stats -e 'stats --json'
    check "$kind: stats read" mp_ok
    check "$kind: stats shows the page heap's free bytes" \
        out_has '^tcmalloc\.pageheap_free_bytes +[0-9]+'
    check "$kind: stats shows tcmalloc's own report" out_has 'Bytes in page heap freelist'
    check "$kind: --json: the property the process itself read" \
        [ "$(jf 'd["figures"]["tcmalloc.pageheap_free_bytes"]')" -ge $((kept * 9 / 10)) ]
    check "$kind: --json: in use is what the process kept" \
        [ "$(jf 'd["in_use"] < 64 * 1024 * 1024')" = True ]

    rss_before=$(awk '/^VmRSS/ {print $2 * 1024}' "/proc/$PID/status")
    mp -p "$PID" -e 'purge --json'
    check "$kind: purge ran" mp_ok
    check "$kind: purge names its call" [ "$(jf 'd["call"]')" = "MallocExtension_ReleaseFreeMemory()" ]
    check "$kind: the page heap was emptied" \
        [ "$(jf 'd["free_held_after"] < d["free_held_before"] - 128 * 1024 * 1024')" = True ]
    rss_after=$(awk '/^VmRSS/ {print $2 * 1024}' "/proc/$PID/status")
    check "$kind: most of it left the process (kernel's VmRSS)" \
        [ $((rss_before - rss_after)) -ge $((kept * 8 / 10)) ]
    check "$kind: purge --json gives the hold time" [ "$(jf 'd["pause_us"] > 0')" = True ]

    mp -p "$PID" -e 'prof on' -e 'dump' -e 'prof off'
    check "$kind: memprof's sampler goes in (no restart)" \
        out_has "^profiling is now on \\(was off\\): memprof's sampler is in process $PID"
    check "$kind: a dump of its samples" out_has '^dump1: [0-9]+ stacks'
    check "$kind: and out again" out_has "^profiling is now off \\(was on\\): memprof's sampler is out"
    check "$kind: the process is left running, untraced" untouched "$PID"
done
