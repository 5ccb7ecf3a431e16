#!/usr/bin/env bash
# profile start --peak (issue 9, item 1): peak_spike allocates far more
# than it ever held (from spike_alloc) and frees it at once when sent
# SIGUSR1, between two periodic dumps, which never see it.  The run keeps
# the dump jemalloc wrote at the top of the climb (prof.gdump, its files
# sent to memprof's private directory with prof.prefix): it names
# spike_alloc.  Afterwards prof.gdump is false again, prof.prefix writes
# where it wrote before, and nothing of memprof's is left in the target's
# TMPDIR.
. "$SRCDIR/tests/integration/lib.sh"

start_target peak_spike
spikes() { grep -c '^spiked' "$TARGET_OUT"; }

# Commands come through a pipe, as a script feeding memprof would send
# them: the run goes on (and takes the peak) while memprof waits for input.
mkfifo "$WORK/cmds"
"$MEMPROF" -p "$PID" <"$WORK/cmds" >"$WORK/peak.out" 2>"$WORK/peak.err" &
MP=$!
exec 7>"$WORK/cmds"
echo 'profile start --duration 5m --every 1m --peak --sample 16' >&7
echo 'profile' >&7
wait_until 20 "the run to start" file_has "$WORK/peak.out" '^run1: running'
kill -USR1 "$PID"
wait_until 20 "the spike to be over" holds eval '[ "$(spikes)" -ge 1 ]'
# jemalloc wrote its files before the target said "spiked"; memprof takes
# them at a tick once they are a second old, which empties its private
# directory.
peak_taken() {
    local d
    d=$(find "$TMPDIR" -maxdepth 1 -name 'memprof-[0-9]*-*' -type d | head -1)
    [ -n "$d" ] && [ -z "$(ls -A "$d" 2>/dev/null)" ]
}
wait_until 20 "memprof to take the peak files" peak_taken
printf '%s\n' 'profile stop' 'dumps' 'top run1.1 3' 'top run1.peak1 3' >&7
exec 7>&-
wait_until 20 "memprof to end" sh -c "! kill -0 $MP 2>/dev/null"
wait "$MP"
OUT=$(cat "$WORK/peak.out"); ERR=$(cat "$WORK/peak.err")
echo "$OUT"; echo "$ERR" >&2
check "the peak dump exists (run1.peak1)" out_has '^run1\.peak1 '
check "the peak dump names spike_alloc first" \
    holds eval 'awk "/\\(run1\\.peak1,/ {t=1} t && /spike_alloc\$/ {f=1} END {exit !f}" <<<"$OUT"'
check "the peak dump holds the spike (over 90 MiB)" \
    out_has '^Total: (9[0-9]|[1-9][0-9][0-9])\.[0-9] MiB in use.*\(run1\.peak1,'
check "the periodic dump does not show it" \
    holds eval '! awk "/\\(run1\\.1,/ {t=1} /\\(run1\\.peak1,/ {t=0} t && /spike_alloc/" <<<"$OUT" | grep -q .'
check "prof.gdump and prof.prefix are said put back" \
    err_has 'run1 stopped \(profile stop\) .*prof.gdump and prof.prefix put back as before'

# A fresh session: gdump off; and prof.prefix back to opt.prof_prefix
# ("jeprof"): with profiling and prof.gdump on again, the next spike's files land as
# jeprof.PID.*.heap in the target's working directory, not in memprof's
# removed directory.
mp -q -p "$PID" -e 'mallctl prof.gdump'
check "prof.gdump is false again" out_has '^prof.gdump: false'
cwd=$(readlink "/proc/$PID/cwd")
mp -q -p "$PID" -e 'prof on' -e 'mallctl prof.gdump true'     # gdump needs prof.active
kill -USR1 "$PID"
wait_until 20 "the second spike to be over" holds eval '[ "$(spikes)" -ge 2 ]'
check "prof.prefix is jemalloc's own again: the spike's dumps are jeprof.$PID.*" \
    holds eval 'ls "$cwd"/jeprof."$PID".*.heap >/dev/null 2>&1'
mp -q -p "$PID" -e 'mallctl prof.gdump false' -e 'prof off'
check "a session finding prof.gdump on warns and says how to turn it off" \
    err_has "warning: prof.gdump is on in this process.*'mallctl prof.gdump false' turns it off"
mp -q -p "$PID" -e 'info'
check "with prof.gdump off again, no such warning" err_lacks 'prof.gdump is on'
rm -f "$cwd"/jeprof."$PID".*.heap
check "no directory of memprof's is left in the target's TMPDIR" no_dump_dirs
check "the target lives on, untraced" untouched "$PID"

# A jemalloc without prof.prefix cannot be told here; --peak is refused
# with the MALLOC_CONF rule like any run.
CONF=prof:true,prof_active:true start_target peak_spike
mp -q -p "$PID" -e 'profile start --peak --duration 2s'
check "--peak follows the MALLOC_CONF rule" \
    holds eval '[ "$RC" -eq 1 ] && assert_err "--force"'
mp -q -p "$PID" -e 'mallctl prof.gdump'
check "the refused run changed nothing (prof.gdump false)" out_has '^prof.gdump: false'
