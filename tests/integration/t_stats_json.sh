# stats --json (issue 8): jemalloc's complete statistics exactly as
# malloc_stats_print("J") writes them, captured through a write callback
# memprof places in the process for one stop -- never its stdout, stderr or
# a file -- and nothing of it left mapped afterwards.  The known 100 MiB
# (50 x 1 MiB, 400 x 64 KiB, 6400 x 4 KiB) is in it exactly as jemalloc
# counts it; stats.allocated agrees with mallctl in the same stop; a cap
# too small refuses with a clear message and prints nothing.
. "$SRCDIR/tests/integration/lib.sh"

MIB=1048576
export JF_DEFS='
je = d["jemalloc"]
m = je["stats.arenas"]["merged"]
def large(size):
    return sum(c["curlextents"] for c, s in zip(m["lextents"], je["arenas"]["lextent"]) if s["size"] == size)
def small(size):
    return sum(b["curregs"] for b, s in zip(m["bins"], je["arenas"]["bin"]) if s["size"] == size)
'
ge() { [ "$1" -ge "$2" ]; }
err_has() { grep -Eq -- "$1" <<<"$ERR"; }
# anonymous executable or read-only mappings (memprof's region would be one)
anon_code() { awk '$5 == 0 && $2 ~ /^r.x|^r--/ && NF == 5' "/proc/$PID/maps" | wc -l; }

CONF=dirty_decay_ms:-1,muzzy_decay_ms:-1 start_target known_heap
before=$(anon_code)

mp -p "$PID" -e 'stats --json'
check "stats --json runs" [ "$RC" -eq 0 ]
check "it parses as JSON" jf 'True'
check "stats.allocated >= 100 MiB" ge "$(jf 'je["stats"]["allocated"]')" $((100 * MIB))
check "the 50 blocks of 1 MiB, exactly" [ "$(jf 'large(1048576)')" -eq 50 ]
# malloc_stats_print holds its own 64 KiB output buffer while it prints
check "the 400 blocks of 64 KiB (+ malloc_stats_print's own buffer)" \
    [ "$(jf 'large(65536) in (400, 401)')" = True ]
check "the 6400 blocks of 4 KiB" ge "$(jf 'small(4096)')" 6400
check "says the size captured and that stats.allocated agrees" \
    err_has "captured [0-9]+ bytes of jemalloc's statistics \(JSON\) in one stop of [0-9]+ us; stats.allocated [0-9]+ agrees with mallctl"
check "the allocated it names is the JSON's" \
    err_has "stats.allocated $(jf 'je["stats"]["allocated"]') agrees"
check "nothing went to the process's stdout or stderr" \
    [ -z "$(grep -l '"jemalloc"' "$TARGET_OUT" "$WORK/known_heap.stderr")" ]
check "no mapping left in the process" [ "$(anon_code)" -eq "$before" ]

mp -p "$PID" -e 'stats --json --max-size 4K'
check "a cap too small is refused" [ "$RC" -eq 1 ]
check "it says so, and how to ask" err_has "larger than the 4096 bytes memprof captures at most.*nothing printed; run 'stats --json --max-size"
check "nothing printed" [ "$(grep -c '"jemalloc"' <<<"$OUT")" -eq 0 ]
check "still no mapping left" [ "$(anon_code)" -eq "$before" ]
mp -p "$PID" -e 'stats --json --max-size lots'
check "a size that is not a number refused" err_has "max-size lots: give a size"
check "process untouched" assert_untouched "$PID"
