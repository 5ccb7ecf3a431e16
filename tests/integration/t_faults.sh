# faults (issue 36.3): a process's page faults sampled by perf_event_open
# for SECONDS and added as a dump.  touch_pages faults in
# touch_pages_leaky(): `faults` then `top` names it first, its mapping is
# anonymous memory, and the analysis commands read the dump (pprof, diff,
# flame); the process is never traced or stopped meanwhile and still checks
# its pages whole after; `profile start --faults` makes a series of them; redis-server's faults under LPUSHes are named
# down to its list push, top totals them as faults and the pprof export's
# sample types are faults/count and faulted_space/bytes as go tool pprof
# reads them; nobody's memprof samples nobody's process at
# perf_event_paranoid 2; a memprof whose seccomp filter refuses
# perf_event_open says so and what to do; an idle process's 0 faults promise
# no code.
. "$SRCDIR/tests/integration/lib.sh"

start_target touch_pages
fds_before=$(ls "/proc/$PID/fd" | wc -l)
# TracerPid of every thread, read all the time `faults` runs (from a
# session already attached: attaching and its end may stop a thread).
watch_tracers() {
    while :; do
        for s in /proc/"$PID"/task/*/status; do awk '/^TracerPid:/ {print $2}' "$s"; done
    done 2>/dev/null >"$WORK/tracers"
}
open_session watch
session_cmd watch dumps '^\(none yet'
watch_tracers &
WATCH=$!
PIDS+=("$WATCH")
session_cmd watch 'faults 2 --name watched' '^watched: '
kill "$WATCH"
close_session
check "no thread was traced while faults ran" \
    sh -c "[ -s '$WORK/tracers' ] && ! grep -qv '^0\$' '$WORK/tracers'"

mp -p "$PID" -e 'faults 2' -e 'top 3' -e 'faults 1 --name second --json' \
   -e "pprof $WORK/faults.pb.gz faults1" -e 'diff faults1 second' \
   -e "flame $WORK/faults.svg faults1"
check "faults ran, and the analysis commands read its dumps" mp_ok
check "faults counted page faults by the sampled ones" \
    out_has '^faults1: [0-9]+ page faults over 2\.[0-9] s \([0-9]+ samples, 3 threads\)'
first_is() { grep -A1 -E '^ +flat' <<<"$OUT" | sed -n 2p | grep -q " $1\$"; }
check "top names touch_pages_leaky first" first_is touch_pages_leaky
check "the whole stack was walked (toucher, start_thread)" out_has '  toucher$'
check "the faults were in anonymous memory" out_has '^ +(9[0-9]|100)\.[0-9] %  anonymous$'
check "--json names the dump" out_has '"name": "second"'
check "--json gives the mappings" out_has '"mapping": "anonymous"'
check "the pprof export decodes" sh -c "zcat '$WORK/faults.pb.gz' | protoc \
    --proto_path='$SRCDIR/lib/profile' --decode=perftools.profiles.Profile \
    '$SRCDIR/lib/profile/pprof.proto' | grep -q touch_pages_leaky"
check "the flame graph names it" grep -q touch_pages_leaky "$WORK/faults.svg"
check "the process is untouched" untouched "$PID"
check "no descriptor or mapping of memprof's left in it" sh -c \
    "[ \$(ls /proc/$PID/fd | wc -l) -eq $fds_before ] && ! grep -q 'memprof\|perf' /proc/$PID/maps"
verified() { kill -USR1 "$PID"; grep -q '^verified [1-9]' "$TARGET_OUT"; }
within 20 verified
check "its pages still hold what it wrote (a 64 MiB round checked whole)" verified

# The run mode: a series of fault dumps, each the faults since the one
# before, that trend reads; the events closed at its end.
mp -p "$PID" -e 'profile start --faults --duration 3 --every 1' -e 'profile wait' \
   -e 'dumps' -e 'top run1.2 3'
check "a --faults run ran to its end" mp_ok
check "it said its events were closed" err_has 'run1 completed .*: 3 dumps; the kernel.s events closed'
check "its dumps are in the session" out_has '^run1\.3 '
check "its second dump names touch_pages_leaky first" first_is touch_pages_leaky
check "the process is untouched after the run" untouched "$PID"

# A memprof whose own seccomp filter refuses perf_event_open (a container's
# profile): the refusal says which and what to do, and nothing is added.
no_perf() { OUT=$("$TARGETS/no_perf_events" "$MEMPROF" -p "$PID" -e 'faults 1' -e dumps 2>&1); RC=$?; }
no_perf
check "a refused perf_event_open fails the command" mp_failed
check "the refusal names the seccomp filter and the way out" \
    out_has 'refused perf_event_open .*\(EACCES\): memprof itself runs under a seccomp filter.*allow perf_event_open in that filter'
check "the process is untouched after the refusal" untouched "$PID"

# Unprivileged, at the kernel's default kernel.perf_event_paranoid (2, set
# for the test and put back by the exit trap: Debian's kernels start at 3,
# where only CAP_PERFMON may sample): nobody's
# memprof samples nobody's process (the kernel asks only that memprof may
# read it as ptrace does), its own faults; those the kernel takes on the
# process's behalf need CAP_PERFMON, and memprof says so.  Copies nobody
# can run (not under $WORK, which is 0700).
bin=$(mktemp -d /tmp/memprof-faults.XXXXXX)
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
trap 'echo "$paranoid" >/proc/sys/kernel/perf_event_paranoid; rm -rf "$bin"; cleanup' EXIT
echo 2 >/proc/sys/kernel/perf_event_paranoid
chmod 755 "$bin"
cp "$MEMPROF" "$TARGETS/touch_pages" "$bin/"
mkdir "$bin/out" && chown nobody:nogroup "$bin/out"
NOBODY=(setpriv --reuid=nobody --regid=nogroup --clear-groups env -u TMPDIR)
"${NOBODY[@]}" sh -c 'cd "$1"; "$2" >"$1/tp.out" 2>&1 & echo $! >"$1/tp.pid"' sh "$bin/out" "$bin/touch_pages"
NPID=$(cat "$bin/out/tp.pid")
PIDS+=("$NPID")
wait_until 20 "nobody's touch_pages to start" grep -q '^ready' "$bin/out/tp.out"
OUT=$(cd "$bin/out" && "${NOBODY[@]}" "$bin/memprof" -p "$NPID" -e 'faults 1' -e 'top 3' 2>&1); RC=$?
check "nobody's memprof samples nobody's process" mp_ok
check "and names the function" first_is touch_pages_leaky
check "it says the kernel's own faults for the process are left out" \
    out_has 'faults the kernel took on the process.s behalf .* are not counted: that needs CAP_PERFMON'

# redis-server (Debian's) growing lists under LPUSH from redis-cli.
start_redis
lpushes() {
    for i in $(seq 1 60); do
        seq 1 4000 | awk -v r="$i" '{printf "LPUSH list%d value-%d-%0100d\n", NR % 40, $1, r}' |
            redis-cli -p "$port" >/dev/null 2>&1 || return 1
    done
}
lpushes &
PUSHER=$!
PIDS+=("$PUSHER")
wait_until 10 "redis to hold list keys" sh -c "redis-cli -p $port dbsize | grep -qv '^0\$'"
mp -p "$PID" -e 'faults 3' -e 'top 60 --cum' -e "pprof $WORK/redis-faults.pb.gz"
check "faults ran on redis-server" mp_ok
check "redis's faults are named down to its list push" out_has 'pushGenericCommand|quicklistPush'
check "top names its values faults, not objects in use" \
    out_has '^Total: [0-9.]+ [KMG]?i?B faulted in, [0-9]+ faults \(faults1, '
# go tool pprof reads the export's sample types: named for what they are
GOPPROF=$(go tool pprof -raw "$WORK/redis-faults.pb.gz" 2>&1)
echo "$GOPPROF" | sed -n 1,4p >&2
check "pprof's sample types are faults/count and faulted_space/bytes" \
    grep -q '^faults/count faulted_space/bytes\[dflt\]$' <<<"$GOPPROF"
check "pprof's period type is faults" grep -q '^PeriodType: faults count$' <<<"$GOPPROF"
check "go tool pprof -top names redis's code" \
    sh -c "go tool pprof -top '$WORK/redis-faults.pb.gz' 2>&1 | grep -Eq 'sdsnewlen|quicklist|listAddNode|zmalloc|dictAdd'"
check "redis answers PING" sh -c "redis-cli -p $port ping | grep -q PONG"
check "redis untouched" untouched "$PID"

# A process that faults nothing meanwhile (sleep): said so, no code promised.
sleep 300 &
IDLE=$!
PIDS+=("$IDLE")
mp -p "$IDLE" -e 'faults 1'
check "faults on an idle process ran" mp_ok
check "it says no page fault grew its RSS, and names no code" \
    out_has '^faults1: 0 page faults over .*: no code to name$'
