# The control commands against a real process: prof sample/reset change
# what jemalloc reports, a rate that could double memory needs --force,
# mallctl reads and writes each kind of value and explains refusals, and
# attach/detach work inside one session.
. "$SRCDIR/tests/integration/lib.sh"
start_target session_idle

# prof sample N really sets prof.lg_sample; prof reset keeps it
mp -p "$PID" -e 'prof sample 17' -e 'mallctl prof.lg_sample' -e 'prof reset' -e 'mallctl prof.lg_sample'
assert_ok
assert_out 'sampling every 2\^17 bytes \(128\.0 KiB\)'
[ "$(grep -c '^prof.lg_sample: 17$' <<<"$OUT")" -eq 2 ] || die "lg_sample not 17 before and after reset"
assert_err 'warning: sampling every 2\^17 bytes can add about 12%'

# a rate that could double small-object memory is refused without --force
mp -p "$PID" -e 'prof sample 12'
assert_fail
assert_err "prof sample 12 --force"
mp -p "$PID" -e 'mallctl prof.lg_sample'
assert_out '^prof.lg_sample: 17$'
mp -p "$PID" -e 'prof sample 12 --force' -e 'mallctl prof.lg_sample' -e 'prof sample 19'
assert_ok
assert_out '^prof.lg_sample: 12$'
mp -p "$PID" -e 'prof sample 63'
assert_fail
assert_err 'give N from 0 to 62'

# mallctl: each type, writes with the old value, actions, refusals
mp -p "$PID" -e 'mallctl opt.prof_prefix' -e 'mallctl stats.allocated' -e 'mallctl opt.lg_prof_interval' \
   -e 'mallctl prof.gdump true' -e 'mallctl prof.gdump' -e 'mallctl prof.gdump false' \
   -e 'mallctl arena.4096.purge' -e 'mallctl arenas.narenas' -e 'mallctl config.stats --type bool'
assert_ok
assert_out '^opt.prof_prefix: jeprof$'
assert_out '^stats.allocated: [1-9][0-9]*$'
assert_out '^opt.lg_prof_interval: -1$'
assert_out '^prof.gdump: false -> true$'
assert_out '^prof.gdump: true$'
assert_out '^arena.4096.purge: done$'
assert_out '^arenas.narenas: [1-9][0-9]*$'
assert_out '^config.stats: true$'
mp -p "$PID" -e 'mallctl opt.prof false'
assert_fail
assert_err 'opt.prof is read-only: opt.\* values are fixed when the process starts'
mp -p "$PID" -e 'mallctl no.such.name --type bool'
assert_fail
assert_err 'no.such.name: this jemalloc has no such control'
mp -p "$PID" -e 'mallctl some.unknown'
assert_fail
assert_err 'does not know the type'
mp -p "$PID" -e 'mallctl prof.active maybe'
assert_fail
assert_err 'not a boolean'
mp -e 'mallctl'
assert_ok
assert_out 'prof.active +bool +rw'

# dump FILE writes the file; dumps lists the session's profiles
mp -p "$PID" -e 'prof on' -e "dump $WORK/one.heap" -e 'dump --name two' -e 'prof off' -e dumps
assert_ok
head -1 "$WORK/one.heap" | grep -q '^heap_v2/' || die "dump FILE did not write a profile"
assert_out '^dump1 '
assert_out '^two '

# attach and detach inside one session, then attach again
mp -e "attach $PID" -e info -e detach -e info
assert_fail
assert_out 'detached from process'
assert_err "'info' needs a process"
mp -e "attach $PID" -e detach -e "attach $PID" -e "attach $PID"
assert_fail
assert_err "already attached to process $PID"
assert_untouched "$PID"
assert_no_dump_dirs
echo "control ok"
