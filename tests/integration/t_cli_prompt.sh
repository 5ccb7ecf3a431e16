# The prompt as a person meets it, through a pseudo-terminal (issue 11,
# items 8-10): Ctrl-C cancels a long analysis and the session goes on;
# Ctrl-C during a sleep while attached leaves no thread stopped, and during
# a call into the process lets the call finish and stays at the prompt; long
# answers go through $PAGER, short ones and 'set pager off' do not; leaving
# with profiling this session turned on asks whether to turn it off
# (Enter: off, n: stays on and stderr says so, Ctrl-C: back at the prompt);
# TAB completes options, arena indices, function names and file names.
. "$SRCDIR/tests/integration/lib.sh"
export HOME="$WORK" PYTHONPATH="$SRCDIR/tests/integration"
printf '#!/bin/sh\necho ran >>"%s/pager.log"\ncat\n' "$WORK" >"$WORK/pager.sh"
chmod +x "$WORK/pager.sh"
export PAGER="$WORK/pager.sh"

prompt() {   # prompt NAME PYTHON-BODY: runs the body (memprof, pid, Prompt, prof_on_session); a check
    local name=$1 body=$2
    check "$name" python3 - "$MEMPROF" "$body" "${PID:-0}" <<'PY'
import sys
from pty_prompt import Prompt
memprof, body, pid = sys.argv[1], sys.argv[2], sys.argv[3]
def prof_on_session():
    """memprof -p PID at the prompt, after this session's prof on."""
    p = Prompt([memprof, "-p", pid])
    p.expect(rb"memprof> ")
    p.command("prof on", rb"profiling is now on")
    return p
exec(body)
PY
}
active() {   # prints prof.active of $PID
    "$MEMPROF" -q -p "$PID" -e 'mallctl prof.active' 2>/dev/null
}

# --- Ctrl-C during a long analysis --------------------------------------------
MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:0 \
    "$TARGETS/gen_stacks" 250000 "$WORK/big.heap" >/dev/null
prompt "Ctrl-C cancels a long analysis and the prompt goes on" '
p = Prompt([memprof, "'"$WORK/big.heap"'"])
p.expect(rb"memprof> ")
p.send("traces 250000 --lines\r")
p.expect(rb"traces 250000 --lines\r?\n")     # the line was read: the command runs
p.send("\x03")
p.expect(rb"memprof: (traces: )?interrupted")   # while symbolizing, or printing
p.expect(rb"memprof> ")
p.command("top 1", rb"Total: .* in use")      # the session and its profile are intact
p.send("\x04")
assert p.wait() == 0
'

# --- completion (TAB; Ctrl-U clears the line between cases) -------------------
start_target plain
prompt "TAB completes options, arena indices, names under an index, functions, files" '
p = Prompt([memprof, "-p", "'"$PID"'", "'"$WORK/big.heap"'"])
p.expect(rb"memprof> ")
p.send("mallctl --ty\t")
p.expect(rb"--type ")
p.send("\x15mallctl arena.\t\t")               # the indices of this process, and 4096 (all)
p.expect(rb"arena\.0\. .*arena\.4096\.")
p.send("\x15mallctl arena.0.pu\t")
p.expect(rb"arena\.0\.purge ")
p.send("\x15top --foc\t")
p.expect(rb"--focus ")
p.send("lea\t")                                # a function of the profile
p.expect(rb"leaf ")
p.send("\x15peek walk\t\t")                    # all the walkN functions
p.expect(rb"walk0 .*walk7")
p.send("\x15load '"$WORK"'/big.he\t")
p.expect(rb"big\.heap ")
p.send("\x15he\t")
p.expect(rb"help ")
p.send("\x15quit\r")
assert p.wait() == 0
'

# --- Ctrl-C during a command while attached: nothing stays stopped -----------
prompt "Ctrl-C during sleep returns to the prompt" '
p = Prompt([memprof, "-p", "'"$PID"'"])
p.expect(rb"memprof> ")
p.send("sleep 30\r")
p.expect(rb"sleep 30\r?\n")
p.wait_syscall("clock_nanosleep")            # the sleep runs
p.send("\x03")
p.expect(rb"sleep interrupted")
p.expect(rb"memprof> ")
p.command("mallctl opt.prof", rb"opt.prof: true")
p.send("quit\r")
assert p.wait() == 0
'
assert_untouched "$PID"

# --- Ctrl-C during a call into the process: the call finishes, memprof stays ---
# (a prof.dump into a FIFO that nobody reads keeps the call in open(); batch
# mode would leave the call and exit, t_safety_hung_call)
PLAIN=$PID
rm -f "$WORK/readfifo"; mkfifo "$WORK/readfifo" "$WORK/dumpfifo"
start_target sleepers read "$WORK/readfifo"
MEMPROF_CALL_TIMEOUT=3600 prompt "Ctrl-C during a call lets it finish and stays at the prompt" '
import subprocess
p = Prompt([memprof, "-p", pid])
p.expect(rb"memprof> ")
p.send("mallctl prof.dump '"$WORK/dumpfifo"'\r")
def in_open():
    with open("/proc/%s/syscall" % pid) as f:
        return f.read().split()[0] in ("2", "85", "257")
while not in_open():              # the borrowed thread waits in open() of the FIFO
    p._read(0.05)
p.send("\x03")
reader = subprocess.Popen(["cat", "'"$WORK/dumpfifo"'"], stdout=subprocess.DEVNULL)
p.expect(rb"prof.dump: set to ")
p.expect(rb"interrupted: the command was let finish")
p.command("mallctl opt.prof", rb"opt.prof: true")
p.send("quit\r")
assert p.wait() == 0
reader.wait()
'
assert_untouched "$PID"
check_reader "$WORK/readfifo"
PID=$PLAIN

# --- the pager ----------------------------------------------------------------
rm -f "$WORK/pager.log"    # the interrupted traces above may have been paged
prompt "a long answer goes through PAGER, a short one does not" '
p = Prompt([memprof], rows=12)
p.expect(rb"memprof> ")
p.send("help\r")
p.expect(rb"Type .help COMMAND. for more")
p.expect(rb"memprof> ")
p.send("help sleep\r")
p.expect(rb"usage: sleep SECONDS")
p.expect(rb"memprof> ")
p.send("\x04")
assert p.wait() == 0
'
check "the pager ran once" [ "$(wc -l <"$WORK/pager.log")" -eq 1 ]
prompt "set pager off prints long answers directly" '
p = Prompt([memprof], rows=12)
p.expect(rb"memprof> ")
p.send("set pager off\r")
p.expect(rb"memprof> ")
p.command("help", rb"Type .help COMMAND. for more")
p.send("\x04")
assert p.wait() == 0
'
prompt "--no-pager prints long answers directly" '
p = Prompt([memprof, "--no-pager"], rows=12)
p.expect(rb"memprof> ")
p.command("help", rb"Type .help COMMAND. for more")
p.send("\x04")
assert p.wait() == 0
'
"$MEMPROF" -e help >/dev/null
check "the pager ran only for the first (not after set pager off, --no-pager, batch)" \
    [ "$(wc -l <"$WORK/pager.log")" -eq 1 ]

# --- leaving with profiling on --------------------------------------------------
# leaving NAME KEYS-BODY STATE: a session that turned profiling on leaves by
# KEYS-BODY (python on p); prof.active is STATE afterwards
leaving() {
    prompt "$1" "p = prof_on_session()
$2
assert p.wait() == 0"
    check "$1: prof.active is $3 afterwards" [ "$(active)" = "prof.active: $3" ]
}
leaving "quit asks; Enter turns profiling off" '
p.expect_after("quit", rb"profiling is still on in process [0-9]+ \(this session turned it on\)\. Turn it off before leaving\? \[Y/n\] ")
p.send("\r")
p.expect(rb"profiling is now off \(was on\)")' false
leaving "Ctrl-D asks too; n leaves it on and says how to turn it off" '
p.send("\x04")
p.expect(rb"Turn it off before leaving\? \[Y/n\] ")
p.send("n\r")
p.expect(rb"profiling stays on in process [0-9]+ .*prof off. turns it off")' true
"$MEMPROF" -q -p "$PID" -e 'prof off' >/dev/null
leaving "Ctrl-C at the question stays at the prompt; y turns it off" '
p.expect_after("quit", rb"\[Y/n\] ")
p.send("\x03")
p.expect(rb"memprof> ")
p.command("mallctl prof.active", rb"prof.active: true")
p.expect_after("quit", rb"\[Y/n\] ")
p.send("y\r")
p.expect(rb"profiling is now off")' false

prompt "no question when this session did not turn profiling on" '
p = Prompt([memprof, "-p", "'"$PID"'"])
p.expect(rb"memprof> ")
p.send("quit\r")
rest = p.drain()
assert b"Y/n" not in rest, rest
assert p.wait() == 0
'
assert_untouched "$PID"
