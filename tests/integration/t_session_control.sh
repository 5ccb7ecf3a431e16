# The control commands against a real process: prof sample/reset change
# what jemalloc reports, a rate that could double memory needs --force,
# mallctl reads and writes each kind of value and explains refusals, and
# attach/detach work inside one session.
. "$SRCDIR/tests/integration/lib.sh"
start_target session_idle

# prof sample N really sets prof.lg_sample; prof reset keeps it
mp -p "$PID" -e 'prof sample 17' -e 'mallctl prof.lg_sample' -e 'prof reset' -e 'mallctl prof.lg_sample'
check "prof sample 17 and prof reset: succeeds" mp_ok
check "prof sample 17 and prof reset: shows sampling every 2^17 bytes (128.0 KiB)" out_has 'sampling every 2\^17 bytes \(128\.0 KiB\)'
check "prof.lg_sample is 17 before and after prof reset" [ "$(grep -c '^prof.lg_sample: 17$' <<<"$OUT")" -eq 2 ]
check "prof sample 17 and prof reset: says warning: sampling every 2^17 bytes can add about 12%" err_has 'warning: sampling every 2\^17 bytes can add about 12%'

# a rate that could double small-object memory is refused without --force
mp -p "$PID" -e 'prof sample 12'
check "prof sample 12: fails" mp_failed
check "prof sample 12: says prof sample 12 --force" err_has "prof sample 12 --force"
mp -p "$PID" -e 'mallctl prof.lg_sample'
check "mallctl prof.lg_sample: shows prof.lg_sample: 17" out_has '^prof.lg_sample: 17$'
mp -p "$PID" -e 'prof sample 12 --force' -e 'mallctl prof.lg_sample' -e 'prof sample 19'
check "prof sample 12 --force: succeeds" mp_ok
check "prof sample 12 --force: shows prof.lg_sample: 12" out_has '^prof.lg_sample: 12$'
mp -p "$PID" -e 'prof sample 63'
check "prof sample 63: fails" mp_failed
check "prof sample 63: says give N from 0 to 62" err_has 'give N from 0 to 62'

# mallctl: each type, writes with the old value, actions, refusals
mp -p "$PID" -e 'mallctl opt.prof_prefix' -e 'mallctl stats.allocated' -e 'mallctl opt.lg_prof_interval' \
   -e 'mallctl prof.gdump true' -e 'mallctl prof.gdump' -e 'mallctl prof.gdump false' \
   -e 'mallctl arena.4096.purge' -e 'mallctl arenas.narenas' -e 'mallctl config.stats --type bool'
check "mallctl of each type: succeeds" mp_ok
check "mallctl of each type: shows opt.prof_prefix: jeprof" out_has '^opt.prof_prefix: jeprof$'
check "mallctl of each type: shows stats.allocated: N" out_has '^stats.allocated: [1-9][0-9]*$'
check "mallctl of each type: shows opt.lg_prof_interval: -1" out_has '^opt.lg_prof_interval: -1$'
check "mallctl of each type: shows prof.gdump: false -> true" out_has '^prof.gdump: false -> true$'
check "mallctl of each type: shows prof.gdump: true" out_has '^prof.gdump: true$'
check "mallctl of each type: shows arena.4096.purge: done" out_has '^arena.4096.purge: done$'
check "mallctl of each type: shows arenas.narenas: N" out_has '^arenas.narenas: [1-9][0-9]*$'
check "mallctl of each type: shows config.stats: true" out_has '^config.stats: true$'
mp -p "$PID" -e 'mallctl opt.prof false'
check "mallctl opt.prof false: fails" mp_failed
check "mallctl opt.prof false: says opt.prof is read-only: opt... values are fixed when the process starts" err_has 'opt.prof is read-only: opt.\* values are fixed when the process starts'
mp -p "$PID" -e 'mallctl no.such.name --type bool'
check "mallctl no.such.name --type bool: fails" mp_failed
check "mallctl no.such.name --type bool: says no.such.name: this jemalloc has no such control" err_has 'no.such.name: this jemalloc has no such control'
mp -p "$PID" -e 'mallctl some.unknown'
check "mallctl some.unknown: fails" mp_failed
check "mallctl some.unknown: says does not know the type" err_has 'does not know the type'
mp -p "$PID" -e 'mallctl prof.active maybe'
check "mallctl prof.active maybe: fails" mp_failed
check "mallctl prof.active maybe: says not a boolean" err_has 'not a boolean'
mp -e 'mallctl'
check "mallctl: succeeds" mp_ok
check "mallctl: shows prof.active bool rw" out_has 'prof.active +bool +rw'

# dump FILE writes the file; dumps lists the session's profiles
mp -p "$PID" -e 'prof on' -e "dump $WORK/one.heap" -e 'dump --name two' -e 'prof off' -e dumps
check "dump FILE, dump --name, dumps: succeeds" mp_ok
check "dump FILE writes a profile" is_heap_profile "$WORK/one.heap"
check "dump FILE, dump --name, dumps: shows dump1" out_has '^dump1 '
check "dump FILE, dump --name, dumps: shows two" out_has '^two '

# attach and detach inside one session, then attach again
mp -e "attach $PID" -e info -e detach -e info
check "attach PID; info; detach; info: fails" mp_failed
check "attach PID; info; detach; info: shows detached from process" out_has 'detached from process'
check "attach PID; info; detach; info: says 'info' needs a process" err_has "'info' needs a process"
mp -e "attach $PID" -e detach -e "attach $PID" -e "attach $PID"
check "attach PID; detach; attach PID; attach PID: fails" mp_failed
check "attach PID; detach; attach PID; attach PID: says already attached to process PID" err_has "already attached to process $PID"
check "the process is left running, untraced" untouched "$PID"
check "no dump directory left" no_dump_dirs
