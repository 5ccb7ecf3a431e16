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
# A busier process sampled more often: a dump with samples has no note.
start_target session_idle
mp -p "$PID" -e 'prof sample 12 --force' -e 'prof on' -e 'sleep 1' -e 'dump' -e 'prof off'
assert_ok
check "a dump with samples: no note" bash -c "grep -Eq '^dump1: [1-9][0-9]* stacks' <<<\"\$1\" && ! grep -q 'holds no' <<<\"\$2\"" _ "$OUT" "$ERR"
echo "empty dump ok"
