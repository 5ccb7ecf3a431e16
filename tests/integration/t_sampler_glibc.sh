# memprof's heap sampler in a glibc malloc process with a known heap
# (glibc_live, -O2 without frame pointers).  At rate 0 (every allocation)
# the dump is exact: each keep_* function's live bytes and objects are what
# the target printed, churn() (allocated and freed) is absent, and every
# stack reads keep_X <- run_round <- main (unwound from call-frame
# information).  Frees forget samples: after the target frees everything
# the keep_* functions are gone.  At 2^12 (4 KiB mean) the unsampled bytes
# of each function are within 15 % of the truth.  While the sampler is in,
# GOT slots of the process point into its region (read from outside);
# after 'prof off' none does, 'dump' is refused and 'info --json' says the
# sampler is off; the process runs on, untraced.  The page that tells the
# process from a forked child (wiped on fork) is made once and reused.
. "$SRCDIR/tests/integration/lib.sh"

CONF= start_target glibc_live
rounds_done() { grep -c '^round [0-9]* done' "$TARGET_OUT"; }
# round: SIGUSR1, then wait for the round's "done" line.
round() {
    local n=$(($(rounds_done) + 1))
    kill -USR1 "$PID"
    wait_until 20 "round $n to finish" grep -q "^round $n done" "$TARGET_OUT"
}
# send CMD WAIT_RE: a command to the session, then wait for its answer.
send() {
    echo "$1" >&3
    wait_until 20 "the session to answer '$1'" grep -Eq -- "$2" "$WORK/s.out"
}
# analyse DUMPFILE ARGS...: an offline memprof on the saved dump.
analyse() { mp "$@"; }
# per-function figures of a top --json in $OUT: "FUNC BYTES OBJECTS" lines.
flat_of() { jf "' '.join(str(r[k]) for r in d['rows'] if r['function'] == '$1' for k in ('flat_bytes', 'flat_objects'))"; }

check "before prof on: no GOT slot points into a sampler" [ "$(got_into_sampler "$PID")" = 0 ]

open_session s
send 'prof sample 0' 'sampling every 2\^0 bytes'
send 'prof on' 'profiling is now on'
check "on: one gate (stand-ins' page) and one body mapped" \
    [ "$(sampler_regions "$PID") $(sampler_bodies "$PID")" = "1 1" ]
check "on: no page of memprof's is both writable and executable" \
    file_lacks "/proc/$PID/maps" ' rwxp .*memprof-sampler' 
on_slots=$(got_into_sampler "$PID")
check "on: GOT slots point into the sampler (read from outside)" [ "${on_slots:-0}" -ge 5 ]
check "on: ctl.state is ON" sampler_state_is "$PID" 1
check "on: ctl.npatches matches the slots seen" [ "$(sampler_ctl "$PID" npatches)" = "$on_slots" ]
check "on: its gate's data page (wiped on fork) is a private anonymous page holding the mark" \
    owner_page_ok "$PID"
check "on: ctl names that page" [ "$(sampler_ctl "$PID" gate)" = "$(sampler_gate_addr "$PID")" ]
owner=$(sampler_gate_addr "$PID")

# (a) rate 0: exact
round
send "dump $WORK/d1.heap" '^dump1: [0-9]+ stacks'
check "rate 0: the dump is a heap profile" is_heap_profile "$WORK/d1.heap"
analyse "$WORK/d1.heap" -e 'top --json 30'
check "rate 0: analysed" mp_ok
check "rate 0: 2414 objects in all" [ "$(jf 'd["total_objects"]')" = 2414 ]
for f in keep_malloc keep_small keep_calloc keep_realloc keep_aligned; do
    want=$(awk -v f="$f" '$1 == "live" && $2 == f {print $3, $4; exit}' "$TARGET_OUT")
    check "rate 0: $f holds exactly what it kept ($want)" [ "$(flat_of "$f")" = "$want" ]
done
check "rate 0: churn() (allocated and freed) is absent" \
    [ "$(jf "any(r['function'] == 'churn' for r in d['rows'])")" = False ]
check "rate 0: total bytes are the sum of the keep_* lines" \
    [ "$(jf 'd["total_bytes"]')" = "$(awk '$1 == "live" {s += $3} END {print s}' "$TARGET_OUT")" ]
analyse "$WORK/d1.heap" -e 'traces 10'
printf '%s\n' "$OUT" >"$WORK/traces1"
# chain FUNC: in 'traces', FUNC's stack goes on with run_round, then main.
chain() {
    awk -v f="$1" '{sub(/^ *[^|]*\| */, "")} {l[NR] = $0} END {
        for (i = 1; i <= NR; i++) if (l[i] == f && l[i+1] == "run_round" && l[i+2] == "main") exit 0
        exit 1 }' "$WORK/traces1"
}
for f in keep_malloc keep_small keep_calloc keep_realloc keep_aligned; do
    check "rate 0: stack $f <- run_round <- main (unwound without frame pointers)" chain "$f"
done
analyse "$WORK/d1.heap" -e 'tree'
printf '%s\n' "$OUT" >"$WORK/tree1"
# under PARENT CHILD: in 'tree', CHILD is a node right under PARENT.
under() {
    awk -v p="$1" -v c="$2" '{ name = $NF; match($0, / +[^ ]+$/); d = RLENGTH - length(name) }
        pd && name == c && d > pd { ok = 1 }
        name == p { pd = d; next } d <= pd { pd = 0 }
        END { exit !ok }' "$WORK/tree1"
}
check "rate 0: tree: run_round under main" under main run_round
check "rate 0: tree: keep_small under run_round" under run_round keep_small

# (c) frees forget samples
kill -USR2 "$PID"
wait_until 10 "the target to free all" grep -q '^freed ' "$TARGET_OUT"
send "dump $WORK/d2.heap" '^dump2: [0-9]+ stacks'
analyse "$WORK/d2.heap" -e 'top --json 30'
check "after free: no keep_* function left" \
    [ "$(jf "any(r['function'].startswith('keep_') for r in d['rows'])")" = False ]
check "after free: the live heap is about nothing (under 64 KiB)" [ "$(jf 'd["total_bytes"] < 65536')" = True ]

# (b) rate 12: 3 rounds (about 2,500 live samples: the table keeps 3,072)
send 'prof sample 12' 'samples forgotten'
check "rate 12: still one region (reused)" [ "$(sampler_regions "$PID")" = 1 ]
mark=$(wc -l <"$TARGET_OUT")
round; round; round
send "dump $WORK/d3.heap" '^dump3: [0-9]+ stacks'
analyse "$WORK/d3.heap" -e 'top --json 30'
check "rate 12: header says 4 KiB" bash -c 'head -1 "$1" | grep -q "^heap_v2/4096$"' _ "$WORK/d3.heap"
for f in keep_malloc keep_small keep_calloc keep_realloc keep_aligned; do
    want=$(tail -n +"$((mark + 1))" "$TARGET_OUT" | awk -v f="$f" '$1 == "live" && $2 == f {s += $3} END {print s}')
    got=$(flat_of "$f" | cut -d' ' -f1)
    echo "rate 12: $f estimated ${got:-none}, truth $want"
    check "rate 12: $f within 15% of its $want bytes (got ${got:-none})" \
        awk -v g="${got:-0}" -v w="$want" 'BEGIN { exit !(g > w * 0.85 && g < w * 1.15) }'
done
check "rate 12: churn() absent" [ "$(jf "any(r['function'] == 'churn' for r in d['rows'])")" = False ]
check "rate 12: no sample dropped (no warning)" file_lacks "$WORK/s.out" 'left out [0-9]+ sample'

# (d) prof off
send 'prof off' 'profiling is now off'
check "off: says how many slots were put back" file_has "$WORK/s.out" "its $on_slots call-table slots put back"
check "off: no GOT slot points into the sampler" [ "$(got_into_sampler "$PID")" = 0 ]
check "off: the gate is closed (state OFF)" sampler_state_is "$PID" 0
check "off: the body is unmapped, the gate stays (inert, for reuse)" \
    [ "$(sampler_regions "$PID") $(sampler_bodies "$PID")" = "1 0" ]
round
check "off: a round counts no thread inside the gate" [ "$(sampler_gate "$PID" inside)" = 0 ]
close_session
check "the session ended well" [ "$MPRC" = 0 ]
mp -p "$PID" -e dump
check "off: dump refused" mp_failed
check "off: dump says the sampler is not in" err_has "memprof's sampler is not in process $PID"
mp -p "$PID" -e 'info --json'
check "off: info --json: sampler possible" [ "$(jf 'd["allocator"]["sampler"]["possible"]')" = True ]
check "off: info --json: sampler not on" [ "$(jf 'd["allocator"]["sampler"]["on"]')" = False ]
check "off: the next session does not report a sampler left by a gone memprof" \
    err_lacks 'memprof that is gone|inherited'

mp -p "$PID" -e 'prof on' -e 'prof off'
check "a later session's prof on/off: done" mp_ok
check "a later session keeps the same gate (none made per session)" \
    [ "$(sampler_gate_addr "$PID")" = "$owner" ]
check "a later session: the owner page still holds the mark" owner_page_ok "$PID"

# (e) the process runs on
round
check "after all: a round still completes with its live lines" \
    [ "$(tail -6 "$TARGET_OUT" | grep -c '^live keep_')" = 5 ]
check "after all: no GOT slot points into the sampler" [ "$(got_into_sampler "$PID")" = 0 ]
check "the process is left running, untraced" untouched "$PID"
