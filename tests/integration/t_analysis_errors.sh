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
check "a junk file: fails" mp_failed
check "a junk file: names it" err_has 'junk\.heap'

mp -e "load $WORK/missing.heap"
check "load of a missing file: fails" mp_failed
check "load of a missing file: names it" err_has 'missing\.heap'

mp -e 'top'
check "top without a profile: fails" mp_failed
check "top without a profile: says no heap profile in this session yet: ...'load FILE'" err_has "no heap profile in this session yet: .*'load FILE'"

mp "$B" -e 'top nosuchdump'
check "top nosuchdump: fails" mp_failed
check "top nosuchdump: says no profile named 'nosuchdump' in this session; 'dumps' lists them" err_has "no profile named 'nosuchdump' in this session; 'dumps' lists them"

mp "$B" -e 'top --alloc'
check "top --alloc: fails" mp_failed
check "top --alloc: says has no cumulative ...prof_accum:true" err_has 'has no cumulative .*prof_accum:true'

mp "$B" -e 'top --focus "leak_(big"'
check "top --focus leak_(big: fails" mp_failed
check "top --focus leak_(big: says --focus 'leak_(big' is not a valid regular expression" err_has "--focus 'leak_\(big' is not a valid regular expression"

mp "$B" -e 'top --thread 999'
check "top --thread 999: fails" mp_failed
check "top --thread 999: says no thread 999 in ...its threads are: 0, 1" err_has 'no thread 999 in .*its threads are: 0, 1'

mp "$B" -e 'top --thread main'
check "top --thread main: fails" mp_failed
check "top --thread main: says takes a thread id" err_has 'takes a thread id'

mp "$B" -e 'top --frobnicate'
check "top --frobnicate: fails" mp_failed
check "top --frobnicate: says unknown option '--frobnicate'" err_has "unknown option '--frobnicate'"

mp "$B" -e 'top --focus'
check "top --focus: fails" mp_failed
check "top --focus: says --focus needs a value" err_has '--focus needs a value'

mp "$B" -e 'peek no_such_function_here'
check "peek no_such_function_here: fails" mp_failed
check "peek no_such_function_here: says no function matching 'no_such_function_here'" err_has "no function matching 'no_such_function_here'"

mp "$B" -e 'peek'
check "peek: fails" mp_failed
check "peek: says usage: peek REGEX" err_has 'usage: peek REGEX'

mp "$B" -e 'tree --nodefraction 3'
check "tree --nodefraction 3: fails" mp_failed
check "tree --nodefraction 3: says fraction from 0 to 1" err_has 'fraction from 0 to 1'

mp "$B" -e 'diff'
check "diff: fails" mp_failed
check "diff: says diff needs two profiles and the session has 1" err_has 'diff needs two profiles and the session has 1'

mp "$B" -e 'diff b.heap'
check "diff b.heap: fails" mp_failed
check "diff b.heap: says nothing to compare" err_has 'nothing to compare'

# The first failure stops the batch: the later command does not run.
mp "$B" -e 'top nosuchdump' -e 'dumps'
check "top nosuchdump; dumps: fails" mp_failed
check "top nosuchdump; dumps: does not show NAME" out_lacks 'NAME'

# --alloc works when the process kept cumulative counts.
mkdir "$WORK/accum"
MALLOC_CONF=prof:true,prof_active:true,prof_accum:true,lg_prof_sample:10 \
    "$TARGETS/alloc_sites" "$WORK/accum" >/dev/null || die "alloc_sites failed"
mp "$WORK/accum/b.heap" -e 'top --alloc'
check "top --alloc: succeeds" mp_ok
check "top --alloc: shows allocated" out_has 'allocated'
# temp_buffers was freed but was allocated: it shows with --alloc only.
check "top --alloc: shows 4.0 MiB ... temp_buffers" out_has ' 4\.0 MiB .* temp_buffers$'
mp "$WORK/accum/b.heap" -e 'top 20'
check "top 20: succeeds" mp_ok
check "top 20: does not show temp_buffers" out_lacks 'temp_buffers$'
