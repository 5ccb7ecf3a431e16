# A thread inside memprof's sampler when 'prof off' comes: the body may be
# unmapped only once no thread is inside it (the gate counts them).
# glibc_events' 'hold' makes its main thread wait inside malloc (for the
# main arena's lock, held by a thread blocked writing to a full pipe), and
# so inside the sampler's body, which called it.  'prof off' puts every
# slot back and closes the gate, finds one thread still inside, keeps the
# body mapped and says so; the process lives.  Once the pipe is drained
# the thread returns through the body and the gate, counted out; the next
# session unmaps the body, leaving the gate alone (8 KiB).
. "$SRCDIR/tests/integration/lib.sh"

start_events_target
cmd() { target_cmd "$@"; }
send() { session_cmd s "$@"; }
inside_is() { [ "$(sampler_gate "$PID" inside)" = "$1" ]; }

open_session s
send 'prof on' 'profiling is now on'
cmd hold '^holding [0-9]+'
FD=$(grep -o '^holding [0-9]*' "$TARGET_OUT" | tail -1 | cut -d' ' -f2)
wait_until 20 "the main thread to wait inside the sampler's body" inside_is 1
check "the gate counts one thread inside the body" inside_is 1
send 'prof off' 'profiling is now off'
cat "$WORK/s.out" >&2
check "prof off: every slot is back" [ "$(got_into_sampler "$PID")" = 0 ]
check "prof off: the gate is closed" [ "$(sampler_gate "$PID" state)" = 0 ]
check "prof off: the body stays mapped, a thread being inside it" [ "$(sampler_bodies "$PID")" = 1 ]
check "prof off: says a thread was still inside and the body stays until later" \
    file_has "$WORK/s.out" "a thread of process $PID was still inside memprof's sampler.*stays mapped"
check "the process lives" alive "$PID"
head -c 65536 "/proc/$PID/fd/$FD" >/dev/null
wait_until 20 "the held malloc to return" grep -q '^held ' "$TARGET_OUT"
check "the thread came back out through the body and the gate" file_has "$TARGET_OUT" '^held ok$'
check "the gate counts no thread inside now" inside_is 0
close_session
check "the session ended well" [ "$MPRC" = 0 ]
mp -p "$PID" -e info
check "the next session works" mp_ok
check "the next session unmapped the body" [ "$(sampler_bodies "$PID")" = 0 ]
sr=$(sampler_smaps "$PID")
check "what stays is the gate: 8 KiB, at most 8 KiB resident ($sr)" sampler_gate_only "$sr"
cmd round '^round ok'
check "the process works on" alive "$PID"
check "the process is left untraced" untouched "$PID"
