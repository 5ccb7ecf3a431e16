# memprof-serve.service's promise, kept where systemd is not PID 1: the
# unit (dist/memprof-serve.service) rates 3.5 or lower in
# `systemd-analyze security --offline`, verifies clean, and memprof-serve
# and memprof run with exactly its capability bounding set (setpriv) and
# its seccomp filters as systemd builds them (tools/package/unit_sandbox.py:
# SystemCallFilter's sets resolved by systemd-analyze, the allow list with
# SystemCallErrorNumber, MemoryDenyWriteExecute, RestrictAddressFamilies),
# TMPDIR its StateDirectory, /tmp a private one: they attach to a jemalloc
# process of another user (nobody, its executable in a 0700 directory of
# nobody's), turn its profiler on and dump a profile, and the agent answers
# /metrics and a pprof heap profile of it.  The price the unit states is
# kept too: a process under a seccomp filter of its own is refused, saying
# why (memprof itself runs under seccomp).
. "$SRCDIR/tests/integration/lib.sh"

UNIT=$SRCDIR/dist/memprof-serve.service
BUILD=$(dirname "$MEMPROF")

systemd-analyze security --offline=true "$UNIT" >"$WORK/security" 2>&1
tail -1 "$WORK/security" >&2
rating=$(sed -n 's/^→ Overall exposure level for memprof-serve.service: \([0-9.]*\) .*/\1/p' "$WORK/security")
check "systemd-analyze security --offline: 3.5 or lower (got ${rating:-none})" \
    awk -v r="${rating:-99}" 'BEGIN { exit !(r <= 3.5) }'
sed "s|/usr/local/bin/memprof-serve|$BUILD/memprof-serve|" "$UNIT" >"$WORK/memprof-serve.service"
systemd-analyze verify --man=no "$WORK/memprof-serve.service" >"$WORK/verify" 2>&1; RC=$?
cat "$WORK/verify" >&2
check "systemd-analyze verify: clean" sh -c "[ $RC = 0 ] && [ ! -s '$WORK/verify' ]"

# The unit's sandbox: its bounding set, then its filters, then CMD.
caps=$(/usr/bin/python3 "$SRCDIR/tools/package/unit_sandbox.py" caps "$UNIT")
echo "bounding set: $caps" >&2
# Outside /tmp, which the sandbox replaces with a tmpfs of its own.
home=$(mktemp -d /var/tmp/memprof-pkgsvc.XXXXXX)
trap 'rm -rf "$home"; cleanup' EXIT
chmod 755 "$home"
mkdir -m 0700 "$home/state" "$home/out"
SANDBOX=(unshare --mount --propagation private sh -c 'mount -t tmpfs tmpfs /tmp && exec "$@"' sandbox
         env TMPDIR="$home/state" setpriv --bounding-set="$caps" --inh-caps=-all
         /usr/bin/python3 "$SRCDIR/tools/package/unit_sandbox.py" run "$UNIT" --)

# nobody's jemalloc process, its program where only nobody may look.
mkdir -m 0700 "$home/nobody"
cp "$TARGETS/known_heap" "$home/nobody/"
chown -R nobody:nogroup "$home/nobody"
setpriv --reuid=nobody --regid=nogroup --clear-groups env -u TMPDIR MALLOC_CONF=prof:true,lg_prof_sample:10 \
    "$home/nobody/known_heap" >"$WORK/kh.out" 2>&1 &
KH=$!
PIDS+=("$KH")
wait_until 20 "known_heap to print ready" grep -q '^ready' "$WORK/kh.out"

"${SANDBOX[@]}" "$MEMPROF" -p "$KH" -e 'prof on' -e "dump $home/out/kh.heap" \
    -e 'top 5' -e 'profile start --force --peak --duration 2s --every 1s' -e 'profile wait' \
    >"$WORK/cli.out" 2>"$WORK/cli.err"; RC=$?
cat "$WORK/cli.out" "$WORK/cli.err" >&2
check "in the sandbox, memprof attaches to nobody's process: prof on, dump, a profiling run with --peak" \
    sh -c "[ $RC = 0 ] && [ -s '$home/out/kh.heap' ] && grep -q '^heap_v2/' '$home/out/kh.heap'"
check "the dump reads: known_heap's main in top" grep -Eq ' main$' "$WORK/cli.out"

# Exactly: each capability left out breaks something (CAP_CHECKPOINT_RESTORE
# is for /proc/PID/map_files, read for files deleted or out of memprof's
# mount namespace; t_container_paths tests that).
without() {    # without CAP: the CLI's session above with CAP dropped
    local set=${caps/,+$1/}
    unshare --mount --propagation private sh -c 'mount -t tmpfs tmpfs /tmp && exec "$@"' sandbox \
        env TMPDIR="$home/state" setpriv --bounding-set="$set" --inh-caps=-all \
        /usr/bin/python3 "$SRCDIR/tools/package/unit_sandbox.py" run "$UNIT" -- \
        "$MEMPROF" -p "$KH" -e "dump $home/out/kh2.heap" \
        -e 'profile start --force --peak --duration 1s --every 1s' -e 'profile wait' \
        >"$WORK/without.out" 2>"$WORK/without.err"; RC=$?
    cat "$WORK/without.err" >&2
}
without dac_override
check "without CAP_DAC_OVERRIDE: nobody's process cannot be read (its 0700 executable, its /proc/PID/mem)" \
    sh -c "[ $RC != 0 ] && grep -Eq 'cannot open /proc/$KH/mem|entry point of process $KH' '$WORK/without.err'"
without chown
check "without CAP_CHOWN: profile start --peak cannot give its directory to nobody" \
    sh -c "[ $RC != 0 ] && grep -q 'cannot give the dump directory' '$WORK/without.err'"
without sys_nice
check "without CAP_SYS_NICE: stops without raised priority, said" \
    grep -q 'does not raise its scheduling priority' "$WORK/without.err"

"${SANDBOX[@]}" "$MEMPROF" serve --listen 127.0.0.1:0 >"$WORK/serve.out" 2>"$WORK/serve.err" &
PIDS+=($!)
wait_until 20 "memprof serve to listen" grep -q 'listening on 127.0.0.1:' "$WORK/serve.err"
SERVE_URL=http://127.0.0.1:$(grep -o 'listening on 127.0.0.1:[0-9]*' "$WORK/serve.err" | cut -d: -f2)
SERVE_PID=$(pgrep -n -x memprof-serve)
grep -E '^(Cap|Seccomp)' "/proc/$SERVE_PID/status" >&2
bnd=$(awk '/^CapBnd:/ {print $2}' "/proc/$SERVE_PID/status")
want=$(setpriv --bounding-set="$caps" awk '/^CapBnd:/ {print $2}' /proc/self/status)
check "memprof-serve runs with exactly the unit's bounding set ($want)" test "$bnd" = "$want"
check "memprof-serve runs under the unit's seccomp filters" \
    grep -Eq '^Seccomp:[[:space:]]+2$' "/proc/$SERVE_PID/status"

http GET "/metrics?pid=$KH"
check "/metrics of nobody's process: 200, up" \
    sh -c "[ $STATUS = 200 ] && grep -Eq '^memprof_target_up\{pid=\"$KH\".*\} 1$' '$WORK/body'"
check "/metrics: jemalloc_allocated_bytes of it" grep -Eq "^jemalloc_allocated_bytes\{pid=\"$KH\"" "$WORK/body"
http GET "/debug/pprof/heap?pid=$KH"
check "a pprof heap profile of it: 200, gzip" sh -c "[ $STATUS = 200 ] && gzip -t '$WORK/body'"

# The price: a process under its own seccomp filter is refused, saying why.
CONF=prof:true,prof_active:false start_target seccomp_filtered
"${SANDBOX[@]}" "$MEMPROF" -p "$PID" -e 'prof on' >"$WORK/filtered.out" 2>"$WORK/filtered.err"; RC=$?
cat "$WORK/filtered.err" >&2
check "a seccomp-filtered process: refused, memprof itself under seccomp said" \
    sh -c "[ $RC != 0 ] && grep -Eq 'memprof itself runs under (a )?seccomp' '$WORK/filtered.err'"
http GET "/metrics?pid=$PID"
check "/metrics of the filtered process: memprof_target_up 0" \
    grep -Eq "^memprof_target_up\{pid=\"$PID\".*\} 0$" "$WORK/body"
http GET "/debug/pprof/heap?pid=$PID"
check "its heap profile: refused, saying memprof-serve runs under seccomp" \
    sh -c "[ $STATUS != 200 ] && grep -Eq 'memprof itself runs under (a )?seccomp' '$WORK/body'"
check "the filtered process lives on" alive "$PID"

# The drop-in that lifts the filters (dist/memprof-serve-unfiltered.conf):
# then that process is profiled, its filter suspended while a thread is held
# (the unit outside /tmp, which the sandbox replaces).
mkdir -p "$home/unfiltered/memprof-serve.service.d"
cp "$WORK/memprof-serve.service" "$home/unfiltered/"
cp "$SRCDIR/dist/memprof-serve-unfiltered.conf" "$home/unfiltered/memprof-serve.service.d/unfiltered.conf"
systemd-analyze security --offline=true "$home/unfiltered/memprof-serve.service" 2>&1 | tail -1 >&2
systemd-analyze verify --man=no "$home/unfiltered/memprof-serve.service" >"$WORK/verify2" 2>&1; RC=$?
check "with the drop-in: systemd-analyze verify clean" sh -c "[ $RC = 0 ] && [ ! -s '$WORK/verify2' ]"
caps2=$(/usr/bin/python3 "$SRCDIR/tools/package/unit_sandbox.py" caps "$home/unfiltered/memprof-serve.service")
unshare --mount --propagation private sh -c 'mount -t tmpfs tmpfs /tmp && exec "$@"' sandbox \
    env TMPDIR="$home/state" setpriv --bounding-set="$caps2" --inh-caps=-all \
    /usr/bin/python3 "$SRCDIR/tools/package/unit_sandbox.py" run "$home/unfiltered/memprof-serve.service" -- \
    sh -c 'grep -q "^Seccomp:[[:space:]]*0" /proc/self/status && exec "$@"' sh \
    "$MEMPROF" -p "$PID" -e 'prof on' -e "dump $home/out/filtered.heap" -e 'prof off' \
    >"$home/unfiltered.out" 2>"$home/unfiltered.err"; RC=$?
cat "$home/unfiltered.out" "$home/unfiltered.err" >&2
check "with the drop-in: unfiltered, CAP_SYS_ADMIN, the filtered process profiled" \
    sh -c "[ $RC = 0 ] && grep -q '^heap_v2/' '$home/out/filtered.heap'"
check "and it lives on" alive "$PID"
