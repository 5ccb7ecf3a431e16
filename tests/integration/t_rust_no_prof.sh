#!/usr/bin/env bash
# A Rust program that cannot be profiled (issue 14 item 4), in its two
# ways.  Built without profiling compiled in (rustprof_noprof: jemalloc-sys
# without its `profiling` feature, the crate's default): memprof attaches
# and reads, but `prof on` and `dump` say the program must be rebuilt with
# that feature, never to restart with _RJEM_MALLOC_CONF (no setting can
# help), and make no call.  Built with profiling but started without
# _RJEM_MALLOC_CONF (opt.prof false): `prof on` (and `mallctl prof.active
# true`) names the variable to set at the next start and leaves prof.active
# false (jemalloc 5.1 would accept it and sample nothing), and a dump says
# that, not "a full or read-only filesystem" (jemalloc's EFAULT there).
. "$SRCDIR/tests/integration/lib.sh"
stops() { grep -c '^pause .* calls=[1-9]' <<<"$ERR"; }
mpt() { MEMPROF_TRACE_PAUSES=1 mp "$@"; }
rebuild='must be rebuilt with .*jemalloc-sys.*`profiling` feature'

# --- no profiling compiled in --------------------------------------------
CONF= start_target rustprof_noprof "$WORK/go.never"
mp -p "$PID" -e 'mallctl config.prof'
check "no profiling compiled in: attach works, config.prof false" out_has '^config.prof: false$'

mpt -p "$PID" -e 'prof on'
check "prof on: fails" [ "$RC" -ne 0 ]
check "prof on: says to rebuild with the profiling feature" err_has "$rebuild"
check "prof on: no advice to restart with _RJEM_MALLOC_CONF" err_lacks 'MALLOC_CONF'
check "prof on: no call made after attach" [ "$(stops)" -eq 1 ]
mp -p "$PID" -e 'mallctl prof.active'
check "prof.active: still absent, said as a build without profiling" \
    bash -c '[ "$1" -ne 0 ] && grep -q "prof.active: .*config.prof is false" <<<"$2"' _ "$RC" "$ERR"

mpt -p "$PID" -e "dump $WORK/noprof.heap"
check "dump: fails" [ "$RC" -ne 0 ]
check "dump: says to rebuild with the profiling feature" err_has "$rebuild"
check "dump: no advice to restart with _RJEM_MALLOC_CONF" err_lacks 'MALLOC_CONF'
check "dump: no call made after attach" [ "$(stops)" -eq 1 ]
check "dump: no file" [ ! -e "$WORK/noprof.heap" ]
check "no profiling compiled in: the target is untouched" untouched "$PID"
kill "$PID"

# --- profiling compiled in, not enabled at start -------------------------
CONF= start_target rustprof "$WORK/go.never"
mpt -p "$PID" -e 'prof on'
check "opt.prof false: prof on fails" [ "$RC" -ne 0 ]
check "opt.prof false: names _RJEM_MALLOC_CONF=prof:true,..." \
    err_has 'opt.prof is false.*restart .*_RJEM_MALLOC_CONF=prof:true,'
check "opt.prof false: no call made after attach" [ "$(stops)" -eq 1 ]
mpt -p "$PID" -e 'mallctl prof.active true'
check "opt.prof false: mallctl prof.active true fails too" [ "$RC" -ne 0 ]
check "opt.prof false: mallctl prof.active true names the variable" \
    err_has 'opt.prof is false.*_RJEM_MALLOC_CONF=prof:true,'
check "opt.prof false: mallctl prof.active true makes no call" [ "$(stops)" -eq 1 ]
mp -p "$PID" -e 'mallctl prof.active'
check "opt.prof false: prof.active stays false" out_has '^prof.active: false$'

mpt -p "$PID" -e "dump $WORK/off.heap"
check "opt.prof false: dump fails" [ "$RC" -ne 0 ]
check "opt.prof false: dump says opt.prof is false and the variable" \
    err_has 'opt.prof is false.*_RJEM_MALLOC_CONF=prof:true'
check "opt.prof false: dump not blamed on the filesystem" err_lacks 'full or read-only'
check "opt.prof false: dump makes no call" [ "$(stops)" -eq 1 ]
# The raw call reaches jemalloc, which answers EFAULT: its real cause too.
mp -p "$PID" -e "mallctl prof.dump $WORK/off2.heap"
check "opt.prof false: mallctl prof.dump fails" [ "$RC" -ne 0 ]
check "opt.prof false: mallctl prof.dump says opt.prof is false" \
    err_has 'prof.dump: .*opt.prof is false.*_RJEM_MALLOC_CONF=prof:true'
check "opt.prof false: mallctl prof.dump not blamed on the filesystem" err_lacks 'full or read-only'
check "opt.prof false: the target is untouched" untouched "$PID"
echo "rust no prof ok"
