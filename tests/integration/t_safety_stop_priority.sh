# memprof raises its own scheduling priority only for the span of a stop
# (SCHED_RR 1, on the borrowed thread's CPU, every CPU kept awake by a
# latency request) and puts back exactly what it had: its policy, nice
# value and CPUs, read from the kernel between commands at the prompt,
# after stops that worked and after one whose call faulted, with no
# /dev/cpu_dma_latency request left open and the kernel's latency target
# as it was.  Where it may not raise itself (no CAP_SYS_NICE) it says so once
# and in `info`; MEMPROF_STOP_PRIORITY=0 turns the raise off.  The target's
# own priority is never touched.
. "$SRCDIR/tests/integration/lib.sh"

arena_of() { awk '/^arena/ {print $2}' "$TARGET_OUT"; }
cpus_all=$(awk '/^Cpus_allowed_list:/ {print $2}' /proc/self/status)

# prompt_checks PID MODE: memprof (nice 7) at a prompt through a terminal;
# after each command its policy, nice and CPUs must be as it started.
# MODE raised: every stop ran at SCHED_RR/1; MODE plain: none did.
prompt_checks() {
    MEMPROF_TRACE_PAUSES=1 python3 - "$MEMPROF" "$1" "$2" "$cpus_all" "$(arena_of)" <<'PY'
import os, re, struct, sys
sys.path.insert(0, os.environ["SRCDIR"] + "/tests/integration")
from pty_prompt import Prompt
memprof, pid, mode, cpus, arena = sys.argv[1:]

def latency_target():
    with open("/dev/cpu_dma_latency", "rb") as f:
        return struct.unpack("i", f.read(4))[0]

latency_before = latency_target()
assert latency_before != 0, "something else holds the CPUs awake: the test cannot tell"
p = Prompt(["nice", "-n", "7", memprof, "-p", pid])
p.expect(rb"memprof> ")

def own():
    sched = open(f"/proc/{p.pid}/sched").read()
    policy = int(re.search(r"^policy\s+:\s+(\d+)", sched, re.M).group(1))
    stat = open(f"/proc/{p.pid}/stat").read()
    nice = int(stat[stat.rindex(")") + 2:].split()[16])
    allowed = re.search(r"^Cpus_allowed_list:\s+(\S+)", open(f"/proc/{p.pid}/status").read(),
                        re.M).group(1)
    return policy, nice, allowed

def latency_requests():
    n = 0
    for fd in os.listdir(f"/proc/{p.pid}/fd"):
        try:
            n += os.readlink(f"/proc/{p.pid}/fd/{fd}") == "/dev/cpu_dma_latency"
        except OSError:
            pass
    return n

def put_back(after):
    got = own()
    assert got == (0, 7, cpus), f"after {after}: policy, nice, CPUs {got}, not (0, 7, {cpus})"
    assert latency_requests() == 0, f"after {after}: memprof holds /dev/cpu_dma_latency open"
    assert latency_target() == latency_before, \
        f"after {after}: CPU latency target {latency_target()}, not {latency_before}"
    print(f"ok: after {after}: SCHED_OTHER, nice 7, CPUs {cpus}, no latency request")

put_back("attach")
for cmd in ["prof on", "prof off", "stats", "info"]:
    p.command(cmd, rb".*")
    put_back(cmd)
if arena != "":
    p.command(f"mallctl arena.{arena}.purge", rb"the call faulted")
    put_back("a call that faulted")
p.send("quit\r")
assert p.wait() == 0, p.buf[-1500:]
text = p.buf.decode(errors="replace")
prios = re.findall(r"^pause tid=\d+ .* prio=(\S+)", text, re.M)
assert prios, text[-1500:]
want = "SCHED_RR/1+awake" if mode == "raised" else "SCHED_OTHER/nice7"
assert set(prios) == {want}, (prios, want)
print(f"ok: {len(prios)} stops, each at {want}")
if mode == "raised":
    assert "does not raise its scheduling priority" not in text, text[-1500:]
    assert re.search(r"stop priority +memprof runs at SCHED_RR 1, on the borrowed thread's "
                     r"CPU, with every CPU kept out of deep idle states", text), text[-1500:]
PY
}

# --- root: raised for each stop, put back after each, also after a fault --
start_target heartbeat
check "root: raised in each stop, all put back between commands" prompt_checks "$PID" raised
start_target faulty_hooks
check "root: put back after a call that faulted" prompt_checks "$PID" raised
assert_untouched "$PID"

# --- the target's own scheduling is never changed --------------------------
start_target heartbeat
before=$(chrt -p "$PID"; awk '{print $19}' "/proc/$PID/stat")
mp -p "$PID" -e 'prof on' -e 'prof off' -e stats
check "the target's policy and nice are untouched" \
    [ "$before" = "$(chrt -p "$PID"; awk '{print $19}' "/proc/$PID/stat")" ]

# --- not permitted: said once, in info too, nothing raised ------------------
nocap() { setpriv --inh-caps=-sys_nice --bounding-set=-sys_nice "$@"; }
OUT=$(MEMPROF_TRACE_PAUSES=1 nocap "$MEMPROF" -p "$PID" -e 'prof on' -e 'prof off' \
      -e stats -e info 2>"$WORK/nocap.err"); RC=$?
ERR=$(cat "$WORK/nocap.err"); printf '%s\n%s\n' "$OUT" "$ERR" >&2
check "no CAP_SYS_NICE: the session works" [ "$RC" = 0 ]
check "no CAP_SYS_NICE: said once" \
    [ "$(grep -c 'note: memprof does not raise its scheduling priority during stops: raising it needs CAP_SYS_NICE' <<<"$ERR")" = 1 ]
check "no CAP_SYS_NICE: info says why" \
    grep -q 'stop priority  *not raised: raising it needs CAP_SYS_NICE' <<<"$OUT"
check "no CAP_SYS_NICE: no stop ran raised" holds eval \
    '[ "$(grep -c "^pause .* prio=SCHED_OTHER/nice0" <<<"$ERR")" -ge 3 ] && ! grep -q "prio=SCHED_RR" <<<"$ERR"'
OUT=$(nocap "$MEMPROF" -p "$PID" -e 'prof on' -e 'info --json' 2>/dev/null)
check "no CAP_SYS_NICE: info --json says why" holds eval \
    'grep -q "\"priority_raised\": *false" <<<"$OUT" && grep -q "\"priority_not_raised_because\": *\"raising it needs CAP_SYS_NICE" <<<"$OUT"'

# --- raised, but the latency request refused: said in info, stops go on ----
# A private mount namespace puts a read-only empty file over the device.
: >"$WORK/no-latency"
OUT=$(MEMPROF_TRACE_PAUSES=1 unshare -m sh -c \
      'mount --bind -o ro "$1" /dev/cpu_dma_latency && shift && exec "$@"' sh \
      "$WORK/no-latency" "$MEMPROF" -p "$PID" -e 'prof on' -e 'prof off' -e info \
      2>"$WORK/asleep.err"); RC=$?
ERR=$(cat "$WORK/asleep.err"); printf '%s\n%s\n' "$OUT" "$ERR" >&2
check "latency request refused: the session works, raised" \
    eval '[ "$RC" = 0 ] && grep -q "^pause .* prio=SCHED_RR/1$" <<<"$ERR" && ! grep -q "+awake" <<<"$ERR"'
check "latency request refused: info says why" \
    grep -q "stop priority .*SCHED_RR 1.*; CPUs not kept awake: /dev/cpu_dma_latency: Read-only file system" <<<"$OUT"

# --- turned off: nothing raised, no note, info says so ----------------------
OUT=$(MEMPROF_STOP_PRIORITY=0 MEMPROF_TRACE_PAUSES=1 "$MEMPROF" -p "$PID" -e 'prof on' \
      -e 'prof off' -e info 2>"$WORK/off.err"); ERR=$(cat "$WORK/off.err")
check "MEMPROF_STOP_PRIORITY=0: no note" holds eval '! grep -q "note: memprof does not raise" <<<"$ERR"'
check "MEMPROF_STOP_PRIORITY=0: info says so" \
    grep -q 'stop priority  *not raised: MEMPROF_STOP_PRIORITY=0' <<<"$OUT"
check "MEMPROF_STOP_PRIORITY=0: no stop ran raised" holds eval \
    'grep -q "^pause .* prio=SCHED_OTHER" <<<"$ERR" && ! grep -q "prio=SCHED_RR" <<<"$ERR"'
assert_untouched "$PID"
