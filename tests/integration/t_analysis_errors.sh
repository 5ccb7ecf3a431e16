#!/usr/bin/env bash
# Analysis errors in batch mode: non-zero exit and a message saying what
# to do, for a bad file, an unknown profile name, --alloc without
# cumulative counts, a bad regex, an unknown thread, an unknown option,
# a pattern matching nothing, and diff with one profile.
. "$SRCDIR/tests/integration/lib.sh"

MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:10 "$TARGETS/alloc_sites" "$WORK" \
    >/dev/null || die "alloc_sites failed"
B=$WORK/b.heap

printf 'this is not a heap profile\n' >"$WORK/junk.heap"
mp "$WORK/junk.heap" -e 'top'
assert_fail
assert_err 'junk\.heap'

mp -e "load $WORK/missing.heap"
assert_fail
assert_err 'missing\.heap'

mp -e 'top'
assert_fail
assert_err "no heap profile in this session yet: .*'load FILE'"

mp "$B" -e 'top nosuchdump'
assert_fail
assert_err "no profile named 'nosuchdump' in this session; 'dumps' lists them"

mp "$B" -e 'top --alloc'
assert_fail
assert_err 'has no cumulative .*prof_accum:true'

mp "$B" -e 'top --focus "leak_(big"'
assert_fail
assert_err "--focus 'leak_\(big' is not a valid regular expression"

mp "$B" -e 'top --thread 999'
assert_fail
assert_err 'no thread 999 in .*its threads are: 0, 1'

mp "$B" -e 'top --thread main'
assert_fail
assert_err 'takes a thread id'

mp "$B" -e 'top --frobnicate'
assert_fail
assert_err "unknown option '--frobnicate'"

mp "$B" -e 'top --focus'
assert_fail
assert_err '--focus needs a value'

mp "$B" -e 'peek no_such_function_here'
assert_fail
assert_err "no function matching 'no_such_function_here'"

mp "$B" -e 'peek'
assert_fail
assert_err 'usage: peek REGEX'

mp "$B" -e 'tree --nodefraction 3'
assert_fail
assert_err 'fraction from 0 to 1'

mp "$B" -e 'diff'
assert_fail
assert_err 'diff needs two profiles and the session has 1'

mp "$B" -e 'diff b.heap'
assert_fail
assert_err 'nothing to compare'

# The first failure stops the batch: the later command does not run.
mp "$B" -e 'top nosuchdump' -e 'dumps'
assert_fail
assert_no_out 'NAME'

# --alloc works when the process kept cumulative counts.
mkdir "$WORK/accum"
MALLOC_CONF=prof:true,prof_active:true,prof_accum:true,lg_prof_sample:10 \
    "$TARGETS/alloc_sites" "$WORK/accum" >/dev/null || die "alloc_sites failed"
mp "$WORK/accum/b.heap" -e 'top --alloc'
assert_ok
assert_out 'allocated'
# temp_buffers was freed but was allocated: it shows with --alloc only.
assert_out ' 4\.0 MiB .* temp_buffers$'
mp "$WORK/accum/b.heap" -e 'top 20'
assert_ok
assert_no_out 'temp_buffers$'
echo ok
