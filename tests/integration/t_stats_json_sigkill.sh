# stats --json with memprof SIGKILLed inside the capture (issue 8): the
# thread that was running malloc_stats_print with memprof's callback
# finishes and restores itself (the self-restore frame), the process runs
# on untouched, at most the one capture region stays mapped, and a new
# session captures again.
. "$SRCDIR/tests/integration/lib.sh"

anon_code() { awk '$5 == 0 && $2 ~ /^r.x/ && NF == 5' "/proc/$PID/maps" | wc -l; }

CONF=narenas:48 start_target many_arenas
before=$(anon_code)

# memprof started by the poller (which must be running first) and killed
# as soon as the capture region is in the process's map.  Whether the
# poller sees the region before the capture ends depends on how fast
# malloc_stats_print runs: a session that ended first is started again,
# within a deadline that stretches with $SLOW.
python3 - "$PID" "$before" "$MEMPROF" "$WORK" <<'PY' || die "no session was caught inside its capture"
import os, signal, subprocess, sys, time
pid, before, memprof, work = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
slow = float(os.environ.get("SLOW", "1"))
def code_maps():
    n = 0
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            w = line.split()
            if len(w) == 5 and w[4] == "0" and w[1][2] == "x":
                n += 1
    return n
end = time.time() + 60 * slow
sessions = 0
while time.time() < end:
    sessions += 1
    with open(f"{work}/mp.out", "w") as out, open(f"{work}/mp.err", "w") as err:
        mp = subprocess.Popen([memprof, "-p", pid, "-e", "stats --json"], stdout=out, stderr=err)
        while time.time() < end and mp.poll() is None:
            if code_maps() > before:
                os.kill(mp.pid, signal.SIGKILL)
                print(f"session {sessions} killed inside its capture")
                sys.exit(0 if mp.wait() == -signal.SIGKILL else 1)
    if mp.poll() is None:
        mp.kill()
        mp.wait()
        break
    if mp.returncode != 0 or code_maps() > before:
        print(f"session {sessions}, not caught, failed ({mp.returncode}) or left its region")
        sys.exit(1)
sys.exit(1)
PY
check "it was killed before it printed" [ ! -s "$WORK/mp.out" ]
untouched() { (assert_untouched "$PID") 2>/dev/null; }
wait_until 20 "no thread of the process traced or stopped" untouched
check "the process runs on" alive "$PID"
check "at most the one capture region stays" [ "$(anon_code)" -le $((before + 1)) ]
mp -p "$PID" -e 'stats --json'
check "a new session captures again" [ "$RC" -eq 0 ]
check "and its statistics agree" grep -q 'agrees with mallctl' <<<"$ERR"
check "that session left nothing more" [ "$(anon_code)" -le $((before + 1)) ]
check "process untouched" assert_untouched "$PID"
