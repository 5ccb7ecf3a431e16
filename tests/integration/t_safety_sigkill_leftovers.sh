# Issue 6.3: a dump must not outlive the session that asked for it.  100
# memprof sessions that dump over and over are SIGKILLed: half of them at
# the moment the target is seen holding memprof's memfd (mid-dump), half
# after a short random delay (the memfd a kill leaves is closed by the next
# session's first stop).  Then one ordinary session that does not dump:
# afterwards nothing of memprof's is left in the target's filesystem
# (its TMPDIR, /tmp, /var/tmp, /dev/shm) and no memprof memfd is open in
# the target, which is alive, untraced and running its own code.  Then 20
# more kills with the private directory forced, half of them the moment
# the session's directory is seen (a random delay alone lands after the
# session on a fast machine: 2 of 20 kills left one), and one session that
# uses it: no directory of memprof's is left either, and the kernel's CPU
# latency target is what it was (no stop's request outlives its memprof).
. "$SRCDIR/tests/integration/lib.sh"

KILLS=${KILLS:-100}
DIR_KILLS=${DIR_KILLS:-20}
touch "$WORK/start-stamp"
latency_before=$(cpu_latency_target)
start_target plain

# memprof's names: memprof.XXXXXX (earlier versions), memprof-PID-HEX.
leftover_names() {
    local d
    for d in "$TMPDIR" /tmp /var/tmp /dev/shm; do
        find "/proc/$PID/root$d" -maxdepth 1 -newer "$WORK/start-stamp" \
            \( -name 'memprof.??????' -o -name 'memprof-[0-9]*-????????????????' \) 2>/dev/null
    done
}
memfds() {
    find "/proc/$PID/fd" -mindepth 1 -maxdepth 1 -lname '/memfd:memprof-dump*' 2>/dev/null | wc -l
}

printf 'prof on\n' >"$WORK/dumps"
for i in $(seq 40); do printf 'dump\n' >>"$WORK/dumps"; done

# killer KILLS memfd|dir: that many SIGKILLs, every other one the moment
# memprof is seen mid-dump (the target holds its memfd; with dir, memprof
# is forced to the private directory and that directory, named after
# memprof's pid, exists), the others after a random delay.
killer() {
python3 - "$MEMPROF" "$PID" "$WORK/dumps" "$1" "$SLOW" "$2" "$TMPDIR" <<'PY' || die "the killer failed"
import glob, os, random, signal, subprocess, sys, time
memprof, pid, script, kills, slow, mode, tmpdir = sys.argv[1:8]
kills, slow = int(kills), float(slow)
env = dict(os.environ, MEMPROF_TEST_NO_MEMFD="1" if mode == "dir" else "0")

def memfds():
    n = 0
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                n += os.readlink(f"/proc/{pid}/fd/{fd}").startswith("/memfd:memprof-dump")
            except OSError:
                pass
    except OSError:
        pass
    return n

def holds_memfd():
    return memfds() > 0

def dirs():
    return len(glob.glob(f"/proc/{pid}/root{tmpdir}/memprof-[0-9]*-*"))

def holds_dir(mp_pid):
    return bool(glob.glob(f"/proc/{pid}/root{tmpdir}/memprof-{mp_pid}-*"))

mid_dump = left = 0
for i in range(kills):
    mp = subprocess.Popen([memprof, "-p", pid, "-x", script], env=env,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # The last kill is a mid-dump one: its leftover meets the final session.
    if i % 2 == (kills - 1) % 2:
        seen = holds_memfd if mode == "memfd" else lambda: holds_dir(mp.pid)
        deadline = time.monotonic() + 10 * slow
        while time.monotonic() < deadline and mp.poll() is None and not seen():
            pass
        if mp.poll() is None and seen():
            mid_dump += 1
    else:
        time.sleep(random.uniform(0, 0.3))
    mp.send_signal(signal.SIGKILL)
    mp.wait()
    left += memfds() if mode == "memfd" else dirs()
print(f"killed {kills} sessions, {mid_dump} of them seen mid-dump; {left} "
      f"{'memfds' if mode == 'memfd' else 'directories'} seen after the kills")
PY
}
killer "$KILLS" memfd >"$WORK/kills.out"
cat "$WORK/kills.out"
SEEN=$(sed -n 's/.* \([0-9]*\) memfds seen after the kills.*/\1/p' "$WORK/kills.out")
echo "memprof memfds open in the target before the last session: $(memfds)"
# The sweep is what this test is about: it must have had work to do.
check "kills left memfds in the target" [ "${SEEN:-0}" -gt 0 ]

mp -p "$PID" -e 'mallctl stats.allocated'
assert_ok
check "no memprof memfd is left open in the target" [ "$(memfds)" -eq 0 ]
left=$(leftover_names)
[ -z "$left" ] || echo "left behind: $left"
check "nothing of memprof's in TMPDIR, /tmp, /var/tmp, /dev/shm" [ -z "$left" ]

# The private directory, forced: killed sessions leave their directories;
# the next session that makes one in the same parent removes those of dead
# memprofs (and its own at its end).
killer "$DIR_KILLS" dir >"$WORK/dir-kills.out"
cat "$WORK/dir-kills.out"
SEEN=$(sed -n 's/.* \([0-9]*\) directories seen after the kills.*/\1/p' "$WORK/dir-kills.out")
check "kills left directories in the target's TMPDIR" [ "${SEEN:-0}" -gt 0 ]
MEMPROF_TEST_NO_MEMFD=1 mp -p "$PID" -e dump
assert_ok
left=$(leftover_names)
[ -z "$left" ] || echo "left behind: $left"
check "directory: nothing of memprof's left after the next session" [ -z "$left" ]
check "the target is alive, not traced, not stopped" assert_untouched "$PID"
# Stops hold a CPU latency request (attach/stop_priority.h); a kill in one
# must not leave the machine's CPUs kept awake.
check "the CPUs' latency target is as before the kills" \
    [ "$(cpu_latency_target)" = "$latency_before" ]
# A kill inside a stop leaves the trampoline at the entry point, where a
# thread may still return: later sessions keep it (t_session_leftover_trampoline).
kept=; [ "$(entry_bytes "$PID")" = "$TRAMPOLINE" ] && kept=entry-kept
check "the target runs its own code" assert_text_intact "$PID" plain $kept
grep -q '^ready' "$TARGET_OUT" || die "target output lost"
echo "sigkill leftovers ok"
