# recent (issue 8): jemalloc 5.3's record of recent sampled allocations.
# 'recent on N' in a live session, then the target leaks one known block
# from leak_known_block(): 'recent --live --older-than 2s' lists it with
# that function in its stack, the blocks it freed are not listed with
# --live, a larger age hides it; 'recent off' and the end of the session
# put alloc_max back.  Bad input and a process without profiling: a clear
# error, nothing changed.
. "$SRCDIR/tests/integration/lib.sh"

# what the session printed since the last question
MARK=0
new_out() { tail -n +$((MARK + 1)) "$WORK/mp.out"; }
out_has() { new_out | grep -Eq -- "$1"; }
out_lacks() { ! out_has "$1"; }
err_has() { grep -Eq -- "$1" <<<"$ERR"; }
alloc_max() {
    "$MEMPROF" -p "$1" -e 'mallctl experimental.prof_recent.alloc_max --type ssize_t' 2>/dev/null |
        sed -n 's/^experimental.prof_recent.alloc_max: //p'
}
# send one command to the running session and wait for its answer
ask() {   # COMMAND REGEX-OF-THE-ANSWER
    MARK=$(wc -l <"$WORK/mp.out")
    echo "$1" >&3
    wait_until 20 "memprof answered '$1'" out_has "$2"
}
since() { awk -v t="$1" -v now="$(date +%s.%N)" 'BEGIN { exit !(now - t >= 2.2) }'; }

CONF=prof:true,prof_active:true,lg_prof_sample:0 start_target leak_recent
check "alloc_max starts at 0" [ "$(alloc_max "$PID")" = 0 ]

mkfifo "$WORK/cmds"
"$MEMPROF" -p "$PID" <"$WORK/cmds" >"$WORK/mp.out" 2>"$WORK/mp.err" &
MP=$!
exec 3>"$WORK/cmds"
ask 'recent on 50' '^keeping the last 50 sampled allocations'

kill -USR1 "$PID"
wait_until 20 "the target leaked its block" grep -q '^leaked' "$TARGET_OUT"
t0=$(date +%s.%N)
ask 'recent --live --older-than 1h' '^[0-9]+ shown$'
check "a larger age hides it" out_lacks 'leak_known_block'
wait_until 20 "2 s since the leak" since "$t0"
ask 'recent --live --older-than 2s' '^[1-9][0-9]* shown$'
check "the leak is listed with its function in its stack" out_has '^    leak_known_block$'
check "as live, 300000 bytes" out_has '^ +300000 bytes .* live$'
check "--live leaves out the freed blocks" out_lacks '^ +5000 bytes .* freed$'
ask 'recent' '^[0-9]+ shown$'
check "without --live the freed blocks are listed" out_has '^ +5000 bytes .* freed$'
check "the freed blocks come from churn_and_free" out_has '^    churn_and_free$'
ask 'recent off' 'alloc_max is 0 again \(it was 50\)'
ask 'recent on 20' '^keeping the last 20'
exec 3>&-
wait "$MP"
check "the session ended well" [ $? -eq 0 ]
# One rule for every setting a session changes (docs/memprof.1, SESSION
# END): a normal end leaves it as the operator set it and says how to undo
# it, so that a later session finds the record; a failed end puts it back.
check "a normal end leaves the record as set" [ "$(alloc_max "$PID")" = 20 ]
check "and says how to put it back" \
    grep -q "keeps a record of its last 20 sampled allocations (experimental.prof_recent.alloc_max was 0): memprof -p $PID -e 'recent off' puts it back" "$WORK/mp.err"
mp -p "$PID" -e 'recent --live --older-than 0s'
later_found() { [ "$RC" -eq 0 ] && grep -Eq '^[0-9]+ shown$' <<<"$OUT"; }
check "a later session finds the record" later_found
mp -p "$PID" -e 'recent off'
check "recent off in a later session turns it off" [ "$(alloc_max "$PID")" = 0 ]
check "and its end says how to turn it back on" \
    grep -q "keeps no record of recent allocations (experimental.prof_recent.alloc_max was 20): memprof -p $PID -e 'recent on 20' puts it back" <<<"$ERR"
mp -p "$PID" -e 'recent on 30' -e 'nonesuch'
check "a failed batch puts the record back" [ "$(alloc_max "$PID")" = 0 ]
check "and says so" err_has 'put back what it changed in process [0-9]+: experimental.prof_recent.alloc_max 0'

mp -p "$PID" -e 'recent on lots'
check "recent on lots refused" err_has 'recent on lots: give how many'
mp -p "$PID" -e 'recent --older-than soon'
check "a bad age refused" err_has '--older-than soon: give an age'
check "nothing changed by bad input" [ "$(alloc_max "$PID")" = 0 ]
check "process untouched" assert_untouched "$PID"

# a process without profiling: a clear error, nothing changed
CONF=prof:false start_target leak_recent
mp -p "$PID" -e 'recent on 10'
check "without profiling: refused" [ "$RC" -eq 1 ]
check "without profiling: says why" err_has 'keeps no record of recent allocations: it needs jemalloc 5.3 or later started with profiling'
mp -p "$PID" -e 'recent'
check "recent without profiling: same" err_has 'keeps no record of recent allocations'
check "no capture buffer left" [ "$(awk '$5 == 0 && $2 ~ /^r.x/ && NF == 5' "/proc/$PID/maps" | wc -l)" -eq 0 ]
