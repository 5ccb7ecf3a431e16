# memprof's heap sampler going in and out of a process that allocates and
# frees without pause on two threads (glibc_churn: each block's pattern is
# checked before it is freed): 200 'prof on'/'prof off' pairs in one batch
# leave the process running (its counters advance, no block corrupted),
# no GOT slot pointing into the sampler, and no descriptor of memprof's
# behind (the fd count is back to what it was).  What stays of memprof's
# is the gate alone, reused each time: its stand-ins' page and its data
# page, 8 KiB mapped and at most 8 KiB resident (smaps), never more after
# any number of cycles; the body (megabytes while on) is unmapped.  Then each way a session ends takes the sampler out: end of
# batch input, 'detach', SIGTERM, SIGINT and SIGHUP to memprof.
. "$SRCDIR/tests/integration/lib.sh"

CONF= start_target glibc_churn 2
fds() { find "/proc/$PID/fd" -mindepth 1 -maxdepth 1 | wc -l; }
counts() { words_at "$PID" counts 2; }
# advancing: the workers' counters grow within 5 s (the process runs).
advancing() { local a; a=$(counts); within 5 holds all_grew_now "$a"; }
all_grew_now() { all_grew "$1" "$(counts)" 2>/dev/null || die "counters stuck at $1"; }
sound() { file_lacks "$TARGET_OUT" CORRUPT && alive "$PID"; }
# out_clean LABEL: after a session ended: no slot into the sampler, the
# gate closed with no thread inside, no body, one gate of 8 KiB (Size and
# Rss), the fd count back to the baseline, the process sound.
out_clean() {
    check "$1: no GOT slot points into the sampler" [ "$(got_into_sampler "$PID")" = 0 ]
    check "$1: the gate is closed (state OFF), no thread counted inside" \
        [ "$(sampler_gate "$PID" state) $(sampler_gate "$PID" inside)" = "0 0" ]
    check "$1: the sampler's body is unmapped" [ "$(sampler_bodies "$PID")" = 0 ]
    check "$1: one gate (stand-ins' page) mapped" [ "$(sampler_regions "$PID")" = 1 ]
    local sr
    sr=$(sampler_smaps "$PID")
    echo "$1: memprof's mappings in process $PID: Size and Rss (KiB) $sr"
    check "$1: memprof's mappings are 8 KiB, at most 8 KiB resident (smaps: $sr)" sampler_gate_only "$sr"
    check "$1: no descriptor of memprof's left (fd count $base_fds)" [ "$(fds)" = "$base_fds" ]
    check "$1: the process is sound (no block corrupted)" sound
    check "$1: its counters advance" advancing
    check "$1: it is left untraced" untouched "$PID"
}

base_fds=$(fds)
check "the workers run" advancing
check "before 'prof on': no mapping of memprof's (smaps)" [ "$(sampler_smaps "$PID")" = "0 0" ]

# one cycle, measured while on: the body is megabytes, the gate 8 KiB
open_session one
echo 'prof on' >&3
wait_until 20 "the sampler to go in" file_has "$WORK/one.out" 'profiling is now on'
on_sr=$(sampler_smaps "$PID")
echo "while on: memprof's mappings in process $PID: Size and Rss (KiB) $on_sr"
check "while on: the body is mapped beside the gate" [ "$(sampler_bodies "$PID")" = 1 ]
echo 'prof off' >&3
wait_until 20 "the sampler to come out" file_has "$WORK/one.out" 'profiling is now off'
close_session
out_clean "one cycle"

: >"$WORK/cycles"
for i in $(seq 200); do printf 'prof on\nprof off\n' >>"$WORK/cycles"; done
before=$(counts)
mp -p "$PID" -x "$WORK/cycles"
check "200 cycles: the batch succeeded" mp_ok
check "200 cycles: 200 times on" [ "$(grep -c '^profiling is now on' <<<"$OUT")" = 200 ]
check "200 cycles: 200 times off, slots put back" \
    [ "$(grep -c '^profiling is now off (was on).*call-table slots put back' <<<"$OUT")" = 200 ]
check "200 cycles: the stand-ins' page was reused 200 times" \
    [ "$(grep -c "reusing its stand-ins' page" <<<"$ERR")" = 200 ]
check "200 cycles: the workers went on meanwhile" all_grew "$before" "$(counts)"
out_clean "200 cycles"

# end of batch input while on
mp -p "$PID" -e 'prof sample 10' -e 'prof on'
check "batch end: ran" mp_ok
check "batch end: says it took the sampler out" err_has "memprof took its sampler out of process $PID: [0-9]+ call-table slots put back"
out_clean "batch end"

# 'detach' while on, the session going on without a process
open_session det
echo 'prof on' >&3
wait_until 20 "the sampler to go in" file_has "$WORK/det.out" 'profiling is now on'
check "detach: the sampler was in" [ "$(got_into_sampler "$PID")" -gt 0 ]
echo 'detach' >&3
echo 'help' >&3
wait_until 20 "the session to detach and answer on" file_has "$WORK/det.out" 'memprof took its sampler out|detached'
wait_until 20 "the session to answer help" file_has "$WORK/det.out" 'list commands, or explain one'
check "detach: the sampler is out while the session still runs" [ "$(got_into_sampler "$PID")" = 0 ]
close_session
check "detach: the session ended well" [ "$MPRC" = 0 ]
out_clean "detach"

# signals to memprof mid-session
for sig in TERM INT HUP; do
    open_session "sig$sig"
    echo 'prof sample 12' >&3
    echo 'prof on' >&3
    wait_until 20 "the sampler to go in" file_has "$WORK/sig$sig.out" 'profiling is now on'
    check "SIG$sig: the sampler was in" [ "$(got_into_sampler "$PID")" -gt 0 ]
    kill -"$sig" "$MP"
    wait_until 20 "memprof to end on SIG$sig" ended "$MP"
    exec 3>&-
    wait "$MP"; rc=$?
    echo "memprof's exit status after SIG$sig: $rc"
    check "SIG$sig: memprof said it took the sampler out" file_has "$WORK/sig$sig.out" 'memprof took its sampler out'
    out_clean "SIG$sig"
done
