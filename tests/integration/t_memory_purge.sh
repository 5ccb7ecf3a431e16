# memory, purge and decay (issue 8): a process holding a known 100 MiB
# frees it with decay disabled; 'memory' shows the pages jemalloc keeps
# dirty, 'purge' gives at least 80 MiB of RSS back and says so; 'decay'
# shows and sets the decay times.  Bad input (an arena that does not
# exist, a value that is not a number) is refused with nothing changed.
. "$SRCDIR/tests/integration/lib.sh"

MIB=1048576
ge() { [ "$1" -ge "$2" ]; }
err_has() { grep -Eq -- "$1" <<<"$ERR"; }
out_has() { grep -Eq -- "$1" <<<"$OUT"; }
rss() { awk '/^VmRSS:/ {print $2 * 1024}' "/proc/$PID/status"; }

CONF=dirty_decay_ms:-1,muzzy_decay_ms:-1 start_target known_heap

mp -p "$PID" -e 'memory --json'
check "memory --json runs" [ "$RC" -eq 0 ]
check "jemalloc holds the 100 MiB" ge "$(jf 'd["jemalloc_allocated"]')" $((100 * MIB))
check "RSS holds them too" ge "$(jf 'd["rss"]')" $((100 * MIB))
check "peak RSS, faults, oom_score given" [ "$(jf '"rss_peak" in d and "minor_faults" in d and "oom_score_adj" in d')" = True ]

mp -p "$PID" -e 'memory --interval 0.3 --json'
check "--interval gives fault rates" [ "$(jf 'd["interval_s"] == 0.3 and d["minor_faults_per_s"] >= 0')" = True ]
mp -p "$PID" -e 'memory --interval soon'
check "--interval that is not a number refused" err_has '--interval soon: give seconds'

kill -USR1 "$PID"
wait_until 20 "the target freed its blocks" grep -q '^freed' "$TARGET_OUT"

mp -p "$PID" -e 'memory --json --maps'
check "after the free, jemalloc's dirty pages >= 80 MiB" ge "$(jf 'd["jemalloc_dirty"]')" $((80 * MIB))
check "--maps: the anonymous group holds >= 80 MiB dirty" \
    ge "$(jf '[g for g in d["maps"] if g["kind"] == "anonymous"][0]["dirty"]')" $((80 * MIB))
check "--maps: jemalloc's libraries have a group each" \
    [ "$(jf 'any(g["name"].endswith("libjemalloc.so.2") for g in d["maps"])')" = True ]
mp -p "$PID" -e 'memory --maps'
check "memory shows the unused dirty pages" out_has 'unused dirty pages ~(8[0-9]|9[0-9]|1[0-9][0-9])\.'
# stats.resident counts pages never touched: above the group's RSS it
# splits nothing, and says so rather than a 0 that is not true.
check "memory --maps sets stats.resident against the anonymous group" \
    out_has "of which jemalloc's extents|not split: jemalloc's stats.resident is above it by"

# bad input: refused, nothing purged
before=$(rss)
mp -p "$PID" -e 'purge 99'
check "purge of an arena that does not exist refused" [ "$RC" -eq 1 ]
check "it says which arenas exist" err_has 'has no arena 99: its arenas are 0 to [0-9]+.*nothing was purged'
mp -p "$PID" -e 'purge abc'
check "purge abc refused" err_has "'abc' is not an arena number"
mp -p "$PID" -e 'decay fast'
check "decay fast refused" err_has "'fast' is not a decay time"
mp -p "$PID" -e 'decay -- -2'
check "decay -2 refused" err_has "'-2' is not a decay time"
check "nothing was purged by bad input" ge "$(rss)" $((before - 8 * MIB))
mp -p "$PID" -e 'decay --json'
check "decay unchanged (-1) by bad input" [ "$(jf 'all(a["dirty_decay_ms"] == -1 and a["muzzy_decay_ms"] == -1 for a in d["arenas"])')" = True ]

mp -p "$PID" -e 'purge'
check "purge runs" [ "$RC" -eq 0 ]
check "purge says how much came back" out_has '^(8[0-9]|9[0-9]|1[0-9][0-9])\.[0-9] MiB came back to the system'
check "RSS really fell by >= 80 MiB" ge $((before - $(rss))) $((80 * MIB))
mp -p "$PID" -e 'purge 0 --json'
check "purge ARENA --json" [ "$(jf 'd["arena"] == 0 and "rss_returned" in d and "resident_after" in d')" = True ]

mp -p "$PID" -e 'decay 1000 2000' -e 'decay --json'
check "decay sets every arena" [ "$(jf 'all(a["dirty_decay_ms"] == 1000 and a["muzzy_decay_ms"] == 2000 for a in d["arenas"])')" = True ]
check "decay says old -> new" out_has '^0 +-1 -> 1000 +-1 -> 2000'
mp -p "$PID" -e 'decay -- -1'
check "decay -1 puts it back" [ "$RC" -eq 0 ]
check "process untouched" assert_untouched "$PID"
