#!/usr/bin/env bash
# A dump with no sample says why and what to do: light_alloc allocates a
# few bytes a second, far below one sample per 512 KiB (the default rate),
# so a dump a second after 'prof on' is empty.  The note names the rate in
# force, how long the session has had profiling on, and the command that
# would help; a dump that has samples gets no such note.
. "$SRCDIR/tests/integration/lib.sh"
start_target light_alloc
mp -p "$PID" -e 'prof on' -e 'sleep 1' -e 'dump' -e 'prof off'
assert_ok
check "dump is empty" grep -Eq '^dump1: 0 stacks, 0 B in use' <<<"$OUT"
check "note names the rate in force" grep -Eq 'note: dump1 holds no sample: .*2\^19 bytes \(512\.0 KiB\)' <<<"$ERR"
check "note says how long profiling has been on" grep -Eq 'turned profiling on \(or reset its counters\) [0-9]+\.[0-9] s ago' <<<"$ERR"
check "note gives the commands that help" grep -Eq "Wait longer before 'dump', or sample more often with 'prof sample 16'" <<<"$ERR"
ERR_LIGHT=$ERR
# Not turned on by this session: says so instead of a duration.
mp -p "$PID" -e 'dump'
assert_ok
check "without 'prof on' here: says the session did not turn it on" \
    grep -q "this session did not turn profiling on" <<<"$ERR"
# Turned on, then off, by this session, then dumped: the note says what
# happened (issue: it used to say the session had not turned it on).
mp -p "$PID" -e 'prof on' -e 'prof off' -e 'dump'
assert_ok
check "after 'prof on', 'prof off': says profiling was off since the session turned it off" \
    grep -Eq "note: dump1 holds no sample: profiling was off when it was taken \(this session turned it off at [0-9]{2}:[0-9]{2}:[0-9]{2} \([0-9]+ s ago\)\), so it holds only what was sampled before that" <<<"$ERR"
check "and never that the session did not turn it on" \
    bash -c '! grep -q "did not turn profiling on" <<<"$1"' _ "$ERR"
assert_untouched "$PID"
# The note is true to what the process allocated (issue 34): light_alloc's
# note above measured what it holds since (stats.allocated) and said it was
# less than one period.  A process whose threads are never sampled
# (prof_thread_active_init:false) and that leaks 32 MiB after 'prof on':
# the note says it holds that much more, never that it did not allocate
# enough, and names threads with their own profiling off.
check "light_alloc: the note says what jemalloc counts allocated since, less than one period" \
    grep -Eq 'jemalloc counts only [0-9.]+ [KMG]?i?B more allocated than then \(stats\.allocated\), less than that' <<<"$ERR_LIGHT"
CONF=prof:true,prof_active:false,prof_thread_active_init:false start_target small_leak
open_session s
echo 'prof on' >&3
wait_until 20 "the session to turn profiling on" grep -q 'profiling is now on' "$WORK/s.out"
kill -USR1 "$PID"
wait_until 20 "small_leak to leak" grep -q '^leaked ' "$TARGET_OUT"
echo 'dump' >&3
echo 'prof off' >&3
close_session
check "unsampled threads: the dump is empty" grep -Eq '^dump1: 0 stacks' "$WORK/s.out"
check "unsampled threads: the note says the process holds 30 MiB or more since 'prof on'" \
    grep -Eq 'note: dump1 holds no sample, yet jemalloc counts (3[0-9]|[4-9][0-9])\.[0-9] MiB more allocated than when memprof turned profiling on' "$WORK/s.out"
check "unsampled threads: and names thread.prof.active" grep -q "thread.prof.active is false" "$WORK/s.out"
check "unsampled threads: never that the process has not allocated enough" \
    bash -c '! grep -Eq "has not allocated|counts only" "$1"' _ "$WORK/s.out"
assert_untouched "$PID"
# A busier process sampled more often: a dump with samples has no note.
start_target session_idle
mp -p "$PID" -e 'prof sample 12 --force' -e 'prof on' -e 'sleep 1' -e 'dump' -e 'prof off'
assert_ok
check "a dump with samples: no note" bash -c "grep -Eq '^dump1: [1-9][0-9]* stacks' <<<\"\$1\" && ! grep -q 'holds no' <<<\"\$2\"" _ "$OUT" "$ERR"
echo "empty dump ok"
