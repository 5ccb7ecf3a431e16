# What a process does while memprof's heap sampler is in (glibc_events,
# commands on its stdin, sampling at rate 0 so that every figure is exact):
#  - fork: the child allocates and frees with the sampler's stand-ins in
#    its call tables and does its work (exit 0); it takes no sample the
#    parent's profile shows; fork gives it the gate's data page wiped (its
#    stand-ins pass straight through) and no body at all;
#  - a child forked while the sampler is in outlives the parent's 'prof
#    off': it keeps only the gate (8 KiB, smaps), works on, and a session
#    on it says it inherited the stand-ins from its parent (not that a
#    memprof died there) and puts its slots back;
#  - threads starting and ending: their blocks are sampled exactly;
#  - dlopen of a library after 'prof on': its call table was not pointed
#    at the sampler, so its allocations are not sampled (the dump lacks
#    them) and nothing breaks; the next 'prof on' covers it;
#  - frees of blocks allocated before 'prof on' go through untouched;
#  - exec: memprof's session says the process executed a new program,
#    and the new program is untouched (no sampler mapped, untraced).
. "$SRCDIR/tests/integration/lib.sh"

start_events_target
cmd() { target_cmd "$@"; }
send() { session_cmd s "$@"; }
ndump=0
# dump_top: a dump saved and its top --json in $OUT.
dump_top() {
    ndump=$((ndump + 1))
    send "dump $WORK/d$ndump.heap" "^dump$ndump: [0-9]+ stacks"
    mp "$WORK/d$ndump.heap" -e 'top --json 40'
}
has_fn() { [ "$(jf "any(r['function'] == '$1' for r in d['rows'])")" = True ]; }
lacks_fn() { ! has_fn "$1"; }
flat_of() { jf "' '.join(str(r[k]) for r in d['rows'] if r['function'] == '$1' for k in ('flat_bytes', 'flat_objects'))"; }

open_session s
send 'prof sample 0' 'sampling every 2\^0'
send 'prof on' 'profiling is now on'
check "on: slots point into the sampler" [ "$(got_into_sampler "$PID")" -gt 0 ]

# fork
cmd fork '^fork (ok|BAD)'
check "fork: the child did its work and exited 0" file_has "$TARGET_OUT" '^fork ok$'
cmd round '^round ok'
dump_top
check "fork: the parent's own allocations are sampled (keep_after 409600 100)" [ "$(flat_of keep_after)" = "409600 100" ]
check "fork: no sample of the child's child_keep in the parent's profile" lacks_fn child_keep
check "fork: blocks from before 'prof on' are not in the profile" lacks_fn keep_before

# a child forked while the sampler is on, and still alive: it takes no
# sample itself (the owner page reads zero in it: wiped on fork); a
# session of its own finds the sampler it inherited, puts the child's
# slots back, and samples it with an owner page of its own
cmd spawn '^spawned [0-9]+'
CHILD=$(grep -o '^spawned [0-9]*' "$TARGET_OUT" | tail -1 | cut -d' ' -f2)
PIDS+=("$CHILD")
child_samples=$(sampler_ctl "$PID" samples)
kill -USR1 "$CHILD"
wait_until 20 "the child's first round" grep -q '^child round ok' "$TARGET_OUT"
check "spawn: the child has no sampler body (fork does not copy it)" [ "$(sampler_bodies "$CHILD")" = 0 ]
check "spawn: the child's gate data page reads zero (closed, no mark)" \
    [ "$(sampler_gate "$CHILD" mark) $(sampler_gate "$CHILD" state)" = "0 0" ]
check "spawn: the child's round entered no body (no thread counted)" [ "$(sampler_gate "$CHILD" inside)" = 0 ]
check "spawn: the parent's samples did not move" [ "$(sampler_ctl "$PID" samples)" = "$child_samples" ]
mkfifo "$WORK/c.cmds"
"$MEMPROF" -p "$CHILD" <"$WORK/c.cmds" >"$WORK/c.out" 2>&1 &
CMP=$!
PIDS+=("$CMP")
exec 5>"$WORK/c.cmds"
echo 'prof sample 0' >&5
echo 'prof on' >&5
wait_until 20 "the child's session to turn profiling on" grep -q 'profiling is now on' "$WORK/c.out"
check "spawn: the child's session says it inherited the stand-ins from its parent" \
    file_has "$WORK/c.out" "process $CHILD inherited memprof's sampler stand-ins by fork from process $PID"
check "spawn: and not that a memprof died there" file_lacks "$WORK/c.out" 'memprof that is gone'
check "spawn: the child's gate holds its own mark now" owner_page_ok "$CHILD"
check "spawn: the child's gate names the child" [ "$(sampler_gate "$CHILD" pid)" = "$CHILD" ]
check "spawn: the parent's gate still names the parent" [ "$(sampler_gate "$PID" pid)" = "$PID" ]
kill -USR1 "$CHILD"
wait_until 20 "the child's second round" count_above "$TARGET_OUT" '^child round ok' 1
echo "dump $WORK/child.heap" >&5
wait_until 20 "the child's dump" grep -Eq '^dump1: [0-9]+ stacks' "$WORK/c.out"
exec 5>&-
wait "$CMP"
check "spawn: the child's session ended well" [ $? = 0 ]
mp "$WORK/child.heap" -e 'top --json 40'
check "spawn: the child's round sampled exactly (child_round 409600 100)" \
    [ "$(flat_of child_round)" = "409600 100" ]
check "spawn: the parent's sampler is still on" sampler_state_is "$PID" 1
kill -9 "$CHILD"

# threads starting and ending while on
cmd 'threads 8' '^threads 8 ok'
dump_top
check "threads: 8 threads' blocks sampled exactly (thread_keep 6553600 800)" [ "$(flat_of thread_keep)" = "6553600 800" ]

# dlopen after prof on
cmd "dlopen $TARGETS/sampler_plugin.so" '^dlopen (ok|BAD)'
check "dlopen: the library loaded and allocated" file_has "$TARGET_OUT" '^dlopen ok 1638400$'
check "dlopen: the process lives" alive "$PID"
dump_top
check "dlopen: its allocations are not sampled (no plugin_keep)" lacks_fn plugin_keep
check "dlopen: the rest is still sampled (thread_keep)" has_fn thread_keep
# a child forked while on, alive across the parent's 'prof off'
cmd spawn '^spawned [0-9]+'
KID=$(grep -o '^spawned [0-9]*' "$TARGET_OUT" | tail -1 | cut -d' ' -f2)
PIDS+=("$KID")
send 'prof off' 'profiling is now off'
check "kid: after the parent's 'prof off' its call tables still point at the gate" \
    [ "$(got_into_sampler "$KID")" -gt 0 ]
kid_sr=$(sampler_smaps "$KID")
echo "kid: memprof's mappings in process $KID: Size and Rss (KiB) $kid_sr"
check "kid: it maps only the gate, 8 KiB, at most 8 KiB resident ($kid_sr)" sampler_gate_only "$kid_sr"
n=$(grep -c '^child round ok' "$TARGET_OUT")
kill -USR1 "$KID"
wait_until 20 "the kid's round" count_above "$TARGET_OUT" '^child round ok' "$n"
check "kid: its round through the stand-ins worked" alive "$KID"
mp -p "$KID" -e info
check "kid: a session on it works" mp_ok
check "kid: it says what the kid holds and that it came by fork" \
    err_has "process $KID inherited memprof's sampler stand-ins by fork from process $PID.*: [1-9][0-9]* call-table slots? put back.*stays mapped"
check "kid: its info says the stand-ins' page is inherited" out_has "inherited from process $PID"
check "kid: its slots are back" [ "$(got_into_sampler "$KID")" = 0 ]
n=$(grep -c '^child round ok' "$TARGET_OUT")
kill -USR1 "$KID"
wait_until 20 "the kid's round" count_above "$TARGET_OUT" '^child round ok' "$n"
check "kid: it works on after" alive "$KID"
kill -9 "$KID"

send 'prof on' 'profiling is now on'
got_into_sampler "$PID" 2>"$WORK/slots" >/dev/null
check "dlopen: after 'prof on' again the library's call table points at the sampler" \
    file_has "$WORK/slots" 'sampler_plugin\.so \(malloc'
cmd plugin '^plugin ok'
dump_top
check "dlopen: after 'prof on' again the library's allocations are sampled" [ "$(flat_of plugin_keep)" = "1638400 100" ]

# frees of blocks allocated before prof on
cmd free_before '^freed_before 500'
check "free before: the process lives" alive "$PID"
cmd round '^round ok'
dump_top
check "free before: a round after it is sampled exactly" [ "$(flat_of keep_after)" = "409600 100" ]
check "free before: nothing else changed (plugin_keep)" [ "$(flat_of plugin_keep)" = "1638400 100" ]

# exec
cmd exec '^ready execd'
send info '^pid '
check "exec: 'info' no longer says the sampler is on" file_lacks "$WORK/s.out" "memprof's sampler \('prof on' puts it in\): on"
echo dump >&3
wait_until 20 "the session to end (a failed command ends a script)" ended "$MP"
cat "$WORK/s.out" >&2
check "exec: the session says the process executed a new program" file_has "$WORK/s.out" 'executed a new program'
check "exec: the new program has no sampler mapped" file_lacks "/proc/$PID/maps" memprof-sampler
check "exec: no GOT slot of the new program points into a sampler" [ "$(got_into_sampler "$PID")" = 0 ]
close_session
echo "memprof's exit status: $MPRC"
check "exec: the session ended without a crash (exit 0 or 1)" [ "$MPRC" -le 1 ]
echo round >&4
wait_until 20 "a round in the new program" count_above "$TARGET_OUT" '^round ok' 2
check "exec: the new program works and is untraced" untouched "$PID"
