# stats through the call runner (issue "Scale", item 4): the summary's
# hundreds of mallctl reads run inside the process in one remote call of
# memprof's runner, and every value printed is the one the reads made one
# by one give (MEMPROF_TEST_NO_RUNNER=1: the calls one at a time, as
# before); the runner's region never stays mapped; a process that refuses
# the region (its address-space limit reached) still gets its statistics,
# one call at a time, with the same values.
. "$SRCDIR/tests/integration/lib.sh"

same_nonempty() { [ -n "$1" ] && [ "$1" = "$2" ]; }
anon_code() { awk '$5 == 0 && $2 ~ /^r.x|^r--/ && NF == 5' "/proc/$PID/maps" | wc -l; }
# The answer without its timing (the only value that may differ).
untimed() { grep -v -e '"pause_us"' -e '^(one stop of'; }
# Stops of a session ($1: the trace) that made more than 100 remote calls.
long_stops() { grep -Ec '^pause .* calls=[0-9]{3,} ' "$1"; }

CONF=dirty_decay_ms:-1,muzzy_decay_ms:-1 start_target known_heap
before=$(anon_code)

for form in 'stats --summary --json' 'stats'; do
    a=$(MEMPROF_TRACE_PAUSES=1 "$MEMPROF" -p "$PID" -e "$form" 2>"$WORK/runner.err" | untimed)
    b=$(MEMPROF_TEST_NO_RUNNER=1 MEMPROF_TRACE_PAUSES=1 "$MEMPROF" -p "$PID" -e "$form" \
            2>"$WORK/plain.err" | untimed)
    check "$form: the same values through the runner as one call at a time" same_nonempty "$a" "$b"
    check "$form: no stop of a hundred remote calls through the runner" \
        [ "$(long_stops "$WORK/runner.err")" -eq 0 ]
    check "$form: one at a time, the reads are a remote call each" \
        [ "$(long_stops "$WORK/plain.err")" -ge 1 ]
done
check "the size classes: the same first summary of a session" \
    grep -Eq '^large +1048576 +50 +52428800$' <<<"$a"
check "no region left mapped" [ "$(anon_code)" -eq "$before" ]

# decay reads (and here writes back the same) two values per arena in one batch
mp -p "$PID" -e 'decay --json'
check "decay through the runner" [ "$RC" -eq 0 ]
check "decay: every arena at -1" [ "$(jf 'all(a["dirty_decay_ms"] == -1 for a in d["arenas"] if a["arena"] != "default")')" = True ]

# No room for another mapping: the runner's region is refused, the reads
# are made one by one, the values are the same.
want=$(MEMPROF_TEST_NO_RUNNER=1 "$MEMPROF" -p "$PID" -e 'stats --summary --json' | untimed)
vm=$(awk '/^VmSize:/ {print $2 * 1024}' "/proc/$PID/status")
prlimit --pid "$PID" --as="$vm" || die "prlimit failed"
got=$(MEMPROF_TRACE_PAUSES=1 "$MEMPROF" -p "$PID" -e 'stats --summary --json' 2>"$WORK/limited.err" | untimed)
check "a process that refuses the region: the same values" same_nonempty "$got" "$want"
check "  read one call at a time" [ "$(long_stops "$WORK/limited.err")" -ge 1 ]
check "no region left mapped after the refusal" [ "$(anon_code)" -eq "$before" ]
check "the process is fine" assert_untouched "$PID"
