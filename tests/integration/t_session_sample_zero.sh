#!/usr/bin/env bash
# `prof sample 0` (issue 14 item 5): at rate 0 every allocation is sampled,
# so the cost formula (bytes x 16 KiB / 2^rate, 1,638,400 % there) does not
# hold.  memprof says in words what rate 0 means (a backtrace per
# allocation, 16 KiB per live small allocation while sampled) with no
# percentage, refuses it without --force (the rate stays as it was), and
# with --force warns in the same words.
. "$SRCDIR/tests/integration/lib.sh"
words='rate 0 samples every allocation: each one takes a backtrace.*promoted to 16 KiB.*up to 16 KiB more per live small allocation'

start_target session_idle
mp -p "$PID" -e 'prof sample 0'
check "prof sample 0: refused" mp_failed
check "prof sample 0: says what rate 0 means, in words" err_has "$words"
check "prof sample 0: no percentage" err_lacks '[0-9]%'
check "prof sample 0: says how to insist" err_has "prof sample 0 --force"
mp -p "$PID" -e 'mallctl prof.lg_sample'
check "prof sample 0: the rate stays 19" out_has '^prof.lg_sample: 19$'

mp -p "$PID" -e 'prof sample 0 --force' -e 'mallctl prof.lg_sample' -e 'prof sample 19'
check "prof sample 0 --force: done" mp_ok
check "prof sample 0 --force: the rate was 0" out_has '^prof.lg_sample: 0$'
check "prof sample 0 --force: warns in words" err_has "warning: $words"
check "prof sample 0 --force: no percentage" err_lacks 'sampling every 2\^0 .*%'
check "the target is untouched" untouched "$PID"
echo "sample zero ok"
