# stats (issue 8): jemalloc's statistics of a process holding a known
# 100 MiB (50 x 1 MiB, 400 x 64 KiB, 6400 x 4 KiB) -- totals, arenas and
# the size distribution exactly as jemalloc counts them, in one stop
# (after epoch) once the size classes are known.  Which of them are large
# is jemalloc's build's choice (its page: 4 KiB on amd64, 64 KiB in
# Debian's arm64 build, where 64 KiB is a small class), read from the
# process (arenas.lextent.0.size, the smallest large class).
. "$SRCDIR/tests/integration/lib.sh"

MIB=1048576
ge() { [ "$1" -ge "$2" ]; }
out_has() { grep -Eq -- "$1" <<<"$OUT"; }
err_has() { grep -Eq -- "$1" <<<"$ERR"; }
count() { jf "sum(c['count'] for c in d['$1'] if c['size'] == $2)"; }

CONF=dirty_decay_ms:-1,muzzy_decay_ms:-1 start_target known_heap

mp -p "$PID" -e 'mallctl arenas.lextent.0.size'
LARGE_MIN=$(awk '$1 == "arenas.lextent.0.size:" && $2 ~ /^[0-9]+$/ {print $2}' <<<"$OUT")
check "the smallest large class is read" [ -n "$LARGE_MIN" ]

mp -p "$PID" -e 'stats --summary --json'
check "stats --summary --json runs" [ "$RC" -eq 0 ]
check "allocated >= 100 MiB" ge "$(jf 'd["allocated"]')" $((100 * MIB))
check "the 50 blocks of 1 MiB, exactly" [ "$(count large 1048576)" -eq 50 ]
if [ "${LARGE_MIN:-0}" -le 65536 ]; then
    check "the 400 blocks of 64 KiB (large), exactly" [ "$(count large 65536)" -eq 400 ]
else
    check "the 400 blocks of 64 KiB (a bin below $LARGE_MIN)" ge "$(count bins 65536)" 400
    check "no 64 KiB block counted as large" [ "$(count large 65536)" -eq 0 ]
fi
check "the 6400 blocks of 4 KiB (a bin)" ge "$(count bins 4096)" 6400
check "bytes = size x count" [ "$(jf 'all(c["bytes"] == c["size"] * c["count"] for c in d["bins"] + d["large"])')" = True ]
check "arena lines with threads and decay" [ "$(jf 'any(a["threads"] >= 1 and a["dirty_decay_ms"] == -1 for a in d["arenas"])')" = True ]
check "fragmentation = active - allocated" [ "$(jf 'd["fragmentation"] == d["active"] - d["allocated"]')" = True ]

# the second summary of a session is one stop, epoch first
OUT=$(MEMPROF_TRACE_PAUSES=1 "$MEMPROF" -p "$PID" -e 'stats' -e 'stats' 2>"$WORK/err"); RC=$?
ERR=$(cat "$WORK/err")
check "stats text runs" [ "$RC" -eq 0 ]
check "text: the 1 MiB class" out_has '^large +1048576 +50 +52428800$'
check "text: fragmentation and dirty pages" out_has '^fragmentation .*of active' 
check "text: pause reported" out_has '^\(one stop of [0-9]+ us, after epoch\)$'
# attach's stop, the size classes' two stops, then one per summary
check "one stop per summary once classes are known" \
    [ "$(grep -c '^pause .* calls=[1-9]' <<<"$ERR")" -eq 5 ]

kill -USR1 "$PID"
wait_until 20 "the target freed its blocks" grep -q '^freed' "$TARGET_OUT"
mp -p "$PID" -e 'stats --summary --json'
check "after the free: the 1 MiB blocks are gone" [ "$(count large 1048576)" -eq 0 ]
check "after the free: >= 80 MiB unused dirty" ge "$(jf 'd["dirty"]')" $((80 * MIB))

mp -p "$PID" -e 'stats --bogus'
check "unknown option refused" err_has "unknown option '--bogus'"
check "process untouched" assert_untouched "$PID"
