# Permission refusals name their real cause and a remedy that can work
# (issue 13.5), and the seccomp filter memprof suspends is said (13.6):
# setuid program run by another user, non-dumpable process and one holding
# capabilities (each as its own user), a rootless user namespace attached
# by its owner (allowed), `nsenter -m` without -p, seccomp with memprof
# root but without CAP_SYS_ADMIN, and the note when a filter is suspended.
. "$SRCDIR/tests/integration/lib.sh"

[ "$(id -u)" -eq 0 ] || die "this test must run as root"
# Copies nobody can run (not under $WORK, which is 0700), and a directory
# nobody writes its outputs to.
bin=$(mktemp -d /tmp/memprof-perm.XXXXXX)
trap 'rm -rf "$bin"; cleanup' EXIT
chmod 755 "$bin"
cp "$MEMPROF" "$TARGETS/plain" "$TARGETS/nondumpable" "$TARGETS/seccomp_filtered" "$bin/"
cp "$bin/plain" "$bin/suid" && chmod 4755 "$bin/suid"
cp "$TARGETS/nojemalloc" "$bin/suid_glibc" && chmod 4755 "$bin/suid_glibc"
mkdir "$bin/out" && chown nobody:nogroup "$bin/out"
NOBODY=(setpriv --reuid=nobody --regid=nogroup --clear-groups env -u TMPDIR)

# start_as NAME CMD...: run CMD (a target) in the background as given,
# wait for its "ready"; sets PID.
start_as() {
    local name=$1; shift
    "$@" sh -c 'cd "$1"; shift; MALLOC_CONF=prof:true,prof_active:false "$@" >"$0.out" 2>&1 & echo $! >"$0.pid"' \
        "$bin/out/$name" "$bin/out" "${TARGET_CMD[@]}"
    PID=$(cat "$bin/out/$name.pid")
    PIDS+=("$PID")
    wait_until 20 "target $name to start" grep -q '^ready' "$bin/out/$name.out"
}
# mp_as CMD...: run memprof under CMD (a prefix such as setpriv ...).
mp_as() {
    OUT=$("$@" 2>"$WORK/mp.stderr"); RC=$?
    ERR=$(cat "$WORK/mp.stderr")
    printf '$ %s\n%s\n%s\n(exit %d)\n' "$*" "$OUT" "$ERR" "$RC" >&2
}
lacks() { ! grep -q -- "$1" <<<"$2"; }
# As nobody, memprof is refused (RC 1, ERR says why); as root it attaches.
refused_to_nobody() {
    mp_as "${NOBODY[@]}" "$bin/memprof" -p "$PID" -e 'mallctl opt.prof'
    check "$1: nobody is refused" test "$RC" = 1
}
root_attaches() {
    mp_as "$bin/memprof" -p "$PID" -e 'mallctl opt.prof'
    check "$1: root attaches" test "$RC" = 0
}

# --- a setuid program started by nobody: real uid nobody, effective root
TARGET_CMD=("$bin/suid")
start_as suid "${NOBODY[@]}"
check "the setuid target runs with differing ids" \
    grep -Eq '^Uid:[[:space:]]+65534[[:space:]]+0' "/proc/$PID/status"
refused_to_nobody setuid
check "setuid: the refusal says the real and effective ids differ" \
    grep -q 'real and effective ids differ (uid real 65534 effective 0' <<<"$ERR"
check "setuid: no advice to run as the same user" lacks 'sudo -u' "$ERR"
root_attaches setuid
check "setuid: jemalloc ignored MALLOC_CONF (secure execution)" grep -q '^opt.prof: false' <<<"$OUT"
check "setuid: the warning points to /etc/malloc.conf" grep -q '/etc/malloc.conf' <<<"$ERR"
check "setuid: no advice to restart with MALLOC_CONF" lacks 'Restart it with MALLOC_CONF' "$ERR"
assert_untouched "$PID"

# --- a setuid program without jemalloc: LD_PRELOAD cannot help it
TARGET_CMD=(env LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2 "$bin/suid_glibc")
start_as suid_glibc "${NOBODY[@]}"
mp_as "$bin/memprof" -p "$PID" -e 'mallctl opt.prof'
check "setuid without jemalloc: refused" test "$RC" = 1
check "setuid without jemalloc: the loader ignored LD_PRELOAD" \
    bash -c "! grep -q libjemalloc /proc/$PID/maps"
check "setuid without jemalloc: the refusal names 'prof on' (the sampler needs no LD_PRELOAD)" \
    grep -q "To profile it, 'prof on' puts memprof's heap sampler in (no restart)" <<<"$ERR"
check "setuid without jemalloc: no advice to start it with LD_PRELOAD" lacks 'Start it with LD_PRELOAD' "$ERR"
assert_untouched "$PID"

# --- a non-dumpable process, memprof as its own user
TARGET_CMD=("$bin/nondumpable")
start_as nondumpable "${NOBODY[@]}"
refused_to_nobody non-dumpable
check "non-dumpable: the refusal says non-dumpable and CAP_SYS_PTRACE" \
    grep -q 'non-dumpable.*needs CAP_SYS_PTRACE' <<<"$ERR"
check "non-dumpable: not blamed on opening the executable" lacks 'cannot open the executable' "$ERR"
root_attaches non-dumpable
assert_untouched "$PID"

# --- a process holding a capability (ambient, so permitted and effective)
TARGET_CMD=("$bin/plain")
start_as caps setpriv --reuid=nobody --regid=nogroup --clear-groups \
    --inh-caps +net_bind_service --ambient-caps +net_bind_service
refused_to_nobody capabilities
check "capabilities: the refusal names them and CAP_SYS_PTRACE" \
    grep -q 'holds capabilities memprof lacks (CapPrm 400).*needs CAP_SYS_PTRACE' <<<"$ERR"
assert_untouched "$PID"

# --- a rootless container (unshare -U -r) attached by its owner
TARGET_CMD=(unshare -U -r "$bin/plain")
start_as rootless "${NOBODY[@]}"
PID=$(pgrep -n -P "$(cat "$bin/out/rootless.pid")" || cat "$bin/out/rootless.pid")
mp_as "${NOBODY[@]}" "$bin/memprof" -p "$PID" -e 'mallctl stats.allocated'
check "rootless: its owner attaches" test "$RC" = 0
check "rootless: its owner reads it" grep -Eq '^stats.allocated: [0-9]+' <<<"$OUT"
assert_untouched "$PID"

# --- nsenter -m without -p: the /proc memprof sees is the container's
# (the target is the namespace's init: it must not be left by a shell)
MALLOC_CONF=prof:true,prof_active:false unshare -p -m -f --mount-proc "$bin/plain" \
    >"$bin/out/pidns.out" 2>&1 &
PIDS+=("$!")
wait_until 20 "target pidns to start" grep -q '^ready' "$bin/out/pidns.out"
PID=$(pgrep -n -P "$!")
PIDS+=("$PID")
mp_as nsenter -t "$PID" -m "$bin/memprof" -p "$PID" -e 'mallctl stats.allocated'
check "nsenter -m: refused" test "$RC" = 1
check "nsenter -m: the refusal says the /proc is another pid namespace's" \
    grep -q 'pid namespace memprof is not in.*nsenter -m' <<<"$ERR"
check "nsenter -m: not called an exited process" lacks 'has exited' "$ERR"
mp_as nsenter -t "$PID" -m -p "$bin/memprof" -p 1 -e 'mallctl stats.allocated'
check "nsenter -m -p: the same process is attached" test "$RC" = 0
assert_untouched "$PID"

# --- seccomp: memprof root, but without CAP_SYS_ADMIN
TARGET_CMD=("$bin/seccomp_filtered")
start_as seccomp env
mp_as capsh --drop=cap_sys_admin -- -c "exec '$bin/memprof' -p $PID -e 'mallctl stats.allocated'"
check "seccomp without CAP_SYS_ADMIN: refused" test "$RC" = 1
check "seccomp without CAP_SYS_ADMIN: the capability is named as missing" \
    grep -q 'runs as root but without CAP_SYS_ADMIN' <<<"$ERR"
check "seccomp without CAP_SYS_ADMIN: no advice to run as root" lacks 'run memprof as root' "$ERR"

# --- seccomp, suspended: said once on stderr, shown in info
mp_as "$bin/memprof" -p "$PID" -e 'mallctl stats.allocated' -e 'prof on' -e 'prof off' -e info
check "seccomp suspended: the session ran" test "$RC" = 0
check "seccomp suspended: said once on stderr" \
    test "$(grep -c 'memprof suspended it (PTRACE_O_SUSPEND_SECCOMP)' <<<"$ERR")" = 1
check "seccomp suspended: shown in info" grep -Eq '^seccomp filter +suspended' <<<"$OUT"
assert_untouched "$PID"
check "seccomp suspended: the filter is back" grep -q '^Seccomp:[[:space:]]*2' "/proc/$PID/status"
