# lib.sh - helpers for integration tests (source it).
#
#   start_target NAME [ARGS...]   runs $TARGETS/NAME in the background with
#                                 MALLOC_CONF=${CONF:-prof:true,prof_active:false},
#                                 waits for it to print "ready", sets $PID
#                                 and $TARGET_OUT (its stdout file)
#   mp ARGS...                    runs memprof, output in $OUT, status in $RC
#   assert_ok / assert_fail       check $RC
#   assert_out REGEX / assert_no_out REGEX / assert_err REGEX
#   alive PID                     the process still exists (some thread of it
#                                 is no zombie)
#
#   check NAME CMD...             one named check: runs CMD, prints
#                                 "pass: NAME" or "FAIL: NAME"; a failed
#                                 check fails the test at its end
#   wait_until SECS WHAT CMD...   polls CMD until it succeeds; dies saying
#                                 WHAT after SECS (times $SLOW: 4 under
#                                 sanitizers) -- never a fixed sleep
set -u
# Hermetic: no test reaches a debuginfod server it did not start itself.
unset DEBUGINFOD_URLS
PIDS=()
# Functions cleanup runs first, for servers that must be stopped their own
# way (start_nginx, start_postgres add theirs); then every pid in PIDS
# gets SIGKILL.
CLEANUP_HOOKS=()
CHECKS_FAILED=0
cleanup() {
    local rc=$? h
    for h in "${CLEANUP_HOOKS[@]}"; do "$h"; done
    for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
    wait 2>/dev/null
    [ "$rc" -eq 0 ] && [ "$CHECKS_FAILED" -gt 0 ] && exit 1
    exit "$rc"
}
trap cleanup EXIT

# Deadlines stretch under ASan/UBSan (run.sh exports SLOW).
SLOW=${SLOW:-1}

die() { echo "FAIL: $*" >&2; exit 1; }

check() {
    local name=$1; shift
    if "$@"; then
        echo "pass: $name"
    else
        echo "FAIL: $name" >&2
        echo "FAIL: $name"
        CHECKS_FAILED=$((CHECKS_FAILED + 1))
    fi
}

# The deadline is on the clock, not a count of polls: a CMD that is slow
# on a loaded machine must not stretch it.
wait_until() {
    local secs=$1 what=$2; shift 2
    local limit_us deadline
    limit_us=$(awk -v s="$secs" -v k="$SLOW" 'BEGIN { printf "%d", s * k * 1000000 }')
    deadline=$(( ${EPOCHREALTIME/[.,]/} + limit_us ))
    while ! "$@"; do
        [ "${EPOCHREALTIME/[.,]/}" -ge "$deadline" ] &&
            die "timed out after $(awk -v u="$limit_us" 'BEGIN { print u / 1e6 }') s waiting for: $what"
        sleep 0.05
    done
}

start_target() {
    local name=$1; shift
    local out="$WORK/$name.$RANDOM.stdout"
    MALLOC_CONF=${CONF-prof:true,prof_active:false} "$TARGETS/$name" "$@" >"$out" 2>"$WORK/$name.stderr" &
    PID=$!
    PIDS+=("$PID")
    TARGET_OUT=$out
    wait_until 20 "target $name to print ready" target_ready "$name"
}
# ready on $TARGET_OUT; dies at once if the target $PID exited instead.
target_ready() {
    grep -q '^ready' "$TARGET_OUT" 2>/dev/null && return 0
    alive "$PID" || die "target $1 exited early: $(cat "$WORK/$1.stderr")"
    return 1
}

mp() {
    OUT=$("$MEMPROF" "$@" 2>"$WORK/mp.stderr"); RC=$?
    ERR=$(cat "$WORK/mp.stderr")
    printf '$ memprof %s\n%s\n%s\n(exit %d)\n' "$*" "$OUT" "$ERR" "$RC" >&2
}

assert_ok()   { [ "$RC" -eq 0 ] || die "memprof exited $RC: $ERR"; }
assert_fail() { [ "$RC" -ne 0 ] || die "memprof succeeded but should have failed"; }
assert_out()    { grep -Eq -- "$1" <<<"$OUT" || die "output lacks /$1/"; }
assert_no_out() { ! grep -Eq -- "$1" <<<"$OUT" || die "output has /$1/"; }
assert_err()    { grep -Eq -- "$1" <<<"$ERR" || die "stderr lacks /$1/: $ERR"; }

# A process lives while any of its threads does: a main thread that called
# pthread_exit stays a zombie while the others run.
# A zombie main thread with others still running is alive: its status then
# counts more than one thread (reading /proc/PID/task while the main thread
# exits can miss the others, so the count is what is trusted).
alive() {
    local st n
    st=$(awk '/^State:/ {print $2}' "/proc/$1/status" 2>/dev/null)
    [ -n "$st" ] || return 1
    [ "$st" != Z ] && [ "$st" != X ] && return 0
    n=$(awk '/^Threads:/ {print $2}' "/proc/$1/status" 2>/dev/null)
    [ "${n:-0}" -gt 1 ]
}

# pprof_text DUMP OUT: exports DUMP with memprof's `pprof` and decodes it
# with protoc into OUT (protobuf text format), or dies.
pprof_text() {
    mp "$1" -e "pprof $2.pb.gz"
    assert_ok
    zcat "$2.pb.gz" | protoc --proto_path="$SRCDIR/lib/profile" \
        --decode=perftools.profiles.Profile "$SRCDIR/lib/profile/pprof.proto" >"$2" \
        || die "protoc cannot decode the export of $1"
}

# --- attach/safety helpers ---------------------------------------------------
#   assert_untouched PID   alive, no thread stopped or traced (after memprof quit)
#   assert_no_dump_dirs    no memprof directory (memprof.* of old versions,
#                          memprof-PID-HEX) left in $TMPDIR
#   toggles N              N×(prof on, prof off, dump) as a memprof script in $WORK/toggles
tracer_of() { awk '/^TracerPid:/ {print $2}' "/proc/$1/status" 2>/dev/null; }
state_of()  { awk '/^State:/ {print $2}' "/proc/$1/status" 2>/dev/null; }
assert_untouched() {
    alive "$1" || die "process $1 died"
    local task tid tracer
    for task in /proc/"$1"/task/*; do
        tid=${task##*/}
        tracer=$(tracer_of "$1/task/$tid")
        [ -n "$tracer" ] || continue    # the thread exited meanwhile
        [ "$tracer" = 0 ] || die "thread $tid of process $1 still traced by $tracer"
        case "$(state_of "$1/task/$tid")" in T|t) die "thread $tid of process $1 left stopped" ;; esac
    done
    return 0
}
# run.sh gives each test its own TMPDIR, which the targets inherit and
# memprof makes its dump directories in: nothing another run leaves in
# /tmp is seen here, nor removed by a test.
dump_dirs() {
    find "${TMPDIR:-/tmp}" -maxdepth 1 \( -name 'memprof.*' -o -name 'memprof-[0-9]*-*' \) 2>/dev/null
}
assert_no_dump_dirs() {
    local left
    left=$(dump_dirs)
    [ -z "$left" ] || die "dump directories left behind: $left"
}
toggles() {
    local n=$1 i
    : >"$WORK/toggles"
    for i in $(seq "$n"); do
        printf 'prof on\nprof off\ndump\n' >>"$WORK/toggles"
    done
}

# The call trampoline memprof writes at the program's entry point (x86-64:
# call *%rax; mov %rax,%rdi; 1: mov %rbx,%rsp; mov $15,%eax; syscall; jmp 1b;
# arm64: blr x9; 1: mov sp, x19; mov x8, #139; svc #0; b 1b), and the
# numbers of the system calls that open a file (x86-64: open 2, creat 85,
# openat 257; arm64 has only openat, 56) and of clock_nanosleep (exported:
# pty_prompt.py's wait_syscall reads SYS_<name>).
case "$(uname -m)" in
aarch64)
    TRAMPOLINE=20013fd67f020091681180d2010000d4fdffff17
    OPEN_SYSCALLS="56"
    export SYS_clock_nanosleep=115 ;;
*)
    TRAMPOLINE=ffd04889c74889dcb80f0000000f05ebf4
    OPEN_SYSCALLS="2 85 257"
    export SYS_clock_nanosleep=230 ;;
esac

# entry_bytes PID [HEX]: print the trampoline's length in bytes at the
# program's entry point as hex, after writing HEX there when given.
entry_bytes() {
python3 - "$((${#TRAMPOLINE} / 2))" "$@" <<'PY'
import os, struct, sys
length = int(sys.argv.pop(1))
pid = int(sys.argv[1])
exe = open(f"/proc/{pid}/exe", "rb").read(64)
e_type, = struct.unpack_from("<H", exe, 16)
entry, = struct.unpack_from("<Q", exe, 24)
if e_type == 3:  # ET_DYN: add the load address of the executable
    path = os.readlink(f"/proc/{pid}/exe")
    for line in open(f"/proc/{pid}/maps"):
        f = line.split()
        if len(f) >= 6 and f[5] == path and int(f[2], 16) == 0:
            entry += int(f[0].split("-")[0], 16)
            break
with open(f"/proc/{pid}/mem", "r+b", buffering=0) as mem:
    if len(sys.argv) > 2:
        mem.seek(entry)
        mem.write(bytes.fromhex(sys.argv[2]))
    mem.seek(entry)
    print(mem.read(length).hex())
PY
}

# assert_text_intact PID PROGRAM [entry-kept]: every executable mapping of
# PROGRAM (the executable's base name) and of libjemalloc holds its file's
# bytes, so no trampoline or other change was left in the process's code.
# With entry-kept, the entry point instead holds the trampoline a killed
# memprof left there, which later sessions must keep.
assert_text_intact() {
    if [ "${3:-}" = entry-kept ]; then
        [ "$(entry_bytes "$1")" = "$TRAMPOLINE" ] || die "process $1: the trampoline left at the entry point was removed"
    fi
python3 - "$((${#TRAMPOLINE} / 2))" "$1" "$2" "${3:-}" <<'PY' || die "process $1: code differs from its files"
import os, struct, sys
tramp_len = int(sys.argv.pop(1))
pid, program, kept = sys.argv[1], sys.argv[2], sys.argv[3] == "entry-kept"
exe_path = os.readlink(f"/proc/{pid}/exe")
hdr = open(f"/proc/{pid}/exe", "rb").read(64)
e_type, = struct.unpack_from("<H", hdr, 16)
entry, = struct.unpack_from("<Q", hdr, 24)
checked = 0
with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb") as mem:
    lines = [l.split() for l in maps]
    if e_type == 3:
        entry += next(int(f[0].split("-")[0], 16) for f in lines
                      if len(f) >= 6 and f[5] == exe_path and int(f[2], 16) == 0)
    for f in lines:
        if len(f) < 6 or "x" not in f[1] or not f[5].startswith("/"):
            continue
        if not (f[5].endswith("/" + program) or "libjemalloc" in f[5]):
            continue
        start, end = (int(x, 16) for x in f[0].split("-"))
        mem.seek(start)
        live = bytearray(mem.read(end - start))
        with open(f[5], "rb") as obj:
            obj.seek(int(f[2], 16))
            disk = bytearray(obj.read(end - start))
        if kept and start <= entry < end:   # checked by the caller
            o = entry - start
            live[o:o + tramp_len] = disk[o:o + tramp_len]
        n = min(len(live), len(disk))
        if live[:n] != disk[:n]:
            bad = next(i for i in range(n) if live[i] != disk[i])
            print(f"{f[5]}: byte at 0x{start + bad:x} differs", file=sys.stderr)
            sys.exit(1)
        checked += 1
if checked < 2:
    print("found no executable mappings to compare", file=sys.stderr)
    sys.exit(1)
PY
}

# start_blocked_dump [PREFIX...]: memprof (run behind PREFIX, e.g. env ...)
# calls `mallctl prof.dump $WORK/dumpfifo` on $PID in the background ($MP,
# output in $WORK/mp.out and mp.err); return once the hijacked thread waits
# in open() of that FIFO (any of OPEN_SYSCALLS), which jemalloc
# 5.3 does until someone opens it for reading, with memprof tracing it.
# The call may stay open as long as a test holds it (MEMPROF_CALL_TIMEOUT
# 3600), unless PREFIX sets its own limit.
start_blocked_dump() {
    [ -p "$WORK/dumpfifo" ] || mkfifo "$WORK/dumpfifo"
    env MEMPROF_CALL_TIMEOUT=3600 "$@" "$MEMPROF" -p "$PID" -e "mallctl prof.dump $WORK/dumpfifo" >"$WORK/mp.out" 2>"$WORK/mp.err" &
    MP=$!
    wait_until 10 "the target to block in open() of the dump FIFO" blocked_in_dump_open
}
blocked_in_dump_open() {    # in whichever thread memprof borrowed
    local task
    for task in /proc/$PID/task/*; do
        case " $OPEN_SYSCALLS " in
        *" $(cut -d' ' -f1 "$task/syscall" 2>/dev/null) "*)
            [ "$(awk '/^TracerPid:/ {print $2}' "$task/status" 2>/dev/null)" = "$MP" ] && return 0 ;;
        esac
    done
    kill -0 "$MP" 2>/dev/null || die "memprof ended before the call blocked: $(cat "$WORK/mp.err")"
    return 1
}

# check_reader FIFO: a sleepers target parked in read() of FIFO gets the
# whole message in one read, its context unchanged ("read ok").
FIFO_MESSAGE='memprof-fifo-message-0123456789'
check_reader() {
    printf '%s\n' "$FIFO_MESSAGE" >"$1"
    wait_until 5 "the reader's verdict (read ok or BAD)" grep -q 'read ok\|BAD' "$TARGET_OUT"
    grep -q 'read ok' "$TARGET_OUT" ||
        die "reader: $(grep -m1 BAD "$TARGET_OUT" || tail -2 "$TARGET_OUT")"
}

# The in-use total of an alloc_sites dump as memprof prints it: 78.1 MiB
# allocated; leak_small's 1 KiB blocks are sampled (about one per KiB), so
# the estimate varies by a few tenths of a MiB either way.
ALLOC_SITES_TOTAL='(77\.[5-9]|78\.[0-9]) MiB'

# --- predicates for `check NAME PRED ARGS...` --------------------------------
# Each is true or false (saying why on stderr); none ends the test.
#   holds CMD...           a command that dies on failure (an assert_*), as a
#                          predicate: its reason goes to stderr
#   within SECS CMD...     CMD succeeds within SECS (times $SLOW), polled as
#                          wait_until does; at the deadline its last reason
#   mp_ok / mp_failed, out_has RE / out_lacks RE / err_has RE,
#   untouched PID, no_dump_dirs, text_intact PID PROGRAM
#                          the assert_* of the same meaning, as predicates
#   file_has FILE RE / file_lacks FILE RE   (extended regex)
#   words_at PID SYMBOL N  the N unsigned longs at SYMBOL (a variable of the
#                          executable of PID), read live from /proc/PID/mem
#   all_grew "A..." "B..." every number of list B exceeds its peer in A
holds() {
    local why
    why=$( ( "$@" ) 2>&1 >/dev/null ) && return 0
    echo "  ${why#FAIL: }" >&2
    return 1
}
within() {
    local secs=$1; shift
    holds wait_until "$secs" "$*" quietly "$@" || "$@"
}
quietly() { "$@" 2>/dev/null; }
mp_ok()        { holds assert_ok; }
mp_failed()    { holds assert_fail; }
out_has()      { holds assert_out "$1"; }
out_lacks()    { holds assert_no_out "$1"; }
err_has()      { holds assert_err "$1"; }
untouched()    { holds assert_untouched "$1"; }
no_dump_dirs() { holds assert_no_dump_dirs; }
text_intact()  { holds assert_text_intact "$@"; }
file_has() {
    grep -Eq -- "$2" "$1" 2>/dev/null && return 0
    echo "  $1 lacks /$2/: $(tail -3 "$1" 2>/dev/null)" >&2
    return 1
}
file_lacks() {
    ! grep -Eq -- "$2" "$1" 2>/dev/null && return 0
    echo "  $1 has /$2/: $(grep -Em3 -- "$2" "$1")" >&2
    return 1
}
words_at() {
python3 - "$@" <<'PY'
import struct, subprocess, sys
pid, symbol, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
exe = f"/proc/{pid}/exe"
syms = subprocess.run(["nm", exe], capture_output=True, text=True, check=True).stdout
addr = next(int(f[0], 16) for f in map(str.split, syms.splitlines())
            if len(f) == 3 and f[2] == symbol)
with open(exe, "rb") as e:
    e_type = struct.unpack("<H", e.read(18)[16:18])[0]
if e_type == 3:  # ET_DYN (PIE): add the load address, its mapping at offset 0
    path = subprocess.run(["readlink", exe], capture_output=True, text=True).stdout.strip()
    with open(f"/proc/{pid}/maps") as maps:
        addr += next(int(f[0].split("-")[0], 16) for f in map(str.split, maps)
                     if len(f) >= 6 and f[5] == path and int(f[2], 16) == 0)
with open(f"/proc/{pid}/mem", "rb") as mem:
    mem.seek(addr)
    print(*struct.unpack(f"<{n}Q", mem.read(8 * n)))
PY
}
all_grew() {
    local -a a=($1) b=($2)
    local i bad=
    [ "${#a[@]}" -gt 0 ] && [ "${#a[@]}" -eq "${#b[@]}" ] || bad="counts differ"
    for i in "${!a[@]}"; do
        [ "${b[$i]:-0}" -gt "${a[$i]}" ] || bad+=" #$i (${a[$i]} -> ${b[$i]:-none})"
    done
    [ -z "$bad" ] && return 0
    echo "  no growth:$bad" >&2
    return 1
}
# count_above FILE RE N: FILE has more than N lines matching RE (a target's
# report printed again).
count_above() { [ "$(grep -Ec -- "$2" "$1" 2>/dev/null)" -gt "$3" ]; }
# ended PID: the process is gone or a zombie (alive's opposite).
ended() { ! alive "$1"; }
# first_diagnosis_has RE: the first line under "diagnoses (largest first)"
# of 'memory' in $OUT matches RE.
first_diagnosis_has() {
    awk '/^diagnoses \(largest first\)$/ { getline; print; exit }' <<<"$OUT" | grep -Eq -- "$1"
}
# The kernel's CPU wake-up latency target in microseconds (PM QoS: what
# every open /dev/cpu_dma_latency request asks, at least; root only).
cpu_latency_target() {
    python3 -c 'import struct; print(struct.unpack("i", open("/dev/cpu_dma_latency", "rb").read(4))[0])'
}
# is_heap_profile FILE: FILE starts as a jemalloc heap profile does.
is_heap_profile() {
    head -c 8 "$1" 2>/dev/null | grep -q '^heap_v2/' && return 0
    echo "  $1 is no heap profile: $(head -c 40 "$1" 2>/dev/null)" >&2
    return 1
}
# state_is PID STATE (as /proc/PID/status shows it: R, S, T, t ...);
# untraced PID / traced PID: TracerPid is 0 / is not.
state_is() { [ "$(state_of "$1")" = "$2" ]; }
untraced() { [ "$(tracer_of "$1")" = 0 ]; }
traced()   { [ "$(tracer_of "$1")" != 0 ]; }
# err_lacks RE: memprof's stderr ($ERR) has no line matching RE.
err_lacks() {
    ! grep -Eq -- "$1" <<<"$ERR" && return 0
    echo "  stderr has /$1/: $(grep -Em3 -- "$1" <<<"$ERR")" >&2
    return 1
}
# open_session NAME: memprof on $PID in the background, reading its commands
# from a FIFO held open on fd 3 (send each with `echo CMD >&3`), so the
# session stays open, idle, for as long as a test needs; output in
# $WORK/NAME.out, its pid in $MP.  close_session: end of input, then its
# exit status in $MPRC.
open_session() {
    mkfifo "$WORK/$1.cmds"
    "$MEMPROF" -p "$PID" <"$WORK/$1.cmds" >"$WORK/$1.out" 2>&1 &
    MP=$!
    PIDS+=("$MP")       # a test that dies with the session open must not hang
    exec 3>"$WORK/$1.cmds"
}
close_session() { exec 3>&-; wait "$MP"; MPRC=$?; }
# session_cmd NAME CMD RE: CMD to the session open_session NAME opened,
# then wait for one more line of its output matching RE than before.
session_cmd() {
    local n
    n=$(grep -Ec -- "$3" "$WORK/$1.out" 2>/dev/null)   # none yet: not made yet
    echo "$2" >&3
    wait_until 30 "the session to answer '$2'" count_above "$WORK/$1.out" "$3" "${n:-0}"
}
# start_events_target: glibc_events reading its commands from a FIFO held
# open on fd 4 (start_target's background command would read /dev/null:
# bash gives a background job without job control that stdin), its output
# in $TARGET_OUT; sets $PID.  target_cmd CMD RE: CMD to it, then wait for
# one more line of its output matching RE than before.
start_events_target() {
    mkfifo "$WORK/ev"
    exec 4<>"$WORK/ev"
    TARGET_OUT=$WORK/glibc_events.stdout
    "$TARGETS/glibc_events" <"$WORK/ev" >"$TARGET_OUT" 2>"$WORK/glibc_events.stderr" &
    PID=$!
    PIDS+=("$PID")
    wait_until 20 "target glibc_events to print ready" target_ready glibc_events
}
target_cmd() {
    local n
    n=$(grep -Ec -- "$2" "$TARGET_OUT")
    echo "$1" >&4
    wait_until 20 "the target to answer '$1'" count_above "$TARGET_OUT" "$2" "$n"
}

# --- JSON and server helpers -------------------------------------------------
#   jf EXPR          a Python expression over the first JSON document in $OUT
#                    (after memprof's "attached to" line): d is the document;
#                    $JF_DEFS may hold Python that defines more names
#   dump_series N [DIR]   commands: prof on, then N dumps 2 s apart
#   start_redis      Debian's redis-server with MALLOC_CONF=prof:true,
#                    prof_active:false on a free loopback port: sets $PID, $port
#   start_nginx [USER]   Debian's nginx (glibc malloc): a master in the
#                    foreground and 2 workers running as USER (www-data),
#                    serving $WORK/nginx/www/index.html on a free loopback
#                    port: sets $PID (the master), $port and $NGINX_PORT;
#                    returns once curl gets the page and both workers exist;
#                    a keep-alive connection stays open for 10^7 requests
#                    (nginx's default, 1000, closes and reopens a load's
#                    connections within a second: a dump could catch none)
#   nginx_worker_pid prints the lowest pid of nginx's workers
#   start_postgres   Debian's PostgreSQL 15 (glibc malloc): initdb into
#                    $WORK/pg as user postgres, the postmaster in the
#                    foreground, its socket in $PGSOCK ($WORK/pgsock), no
#                    TCP: sets $PID (the postmaster), $port and $PG_PORT (its
#                    socket's number), $PGSOCK; returns once psql answers
#                    and an idle psql session is open
#   pg_sql SQL       runs SQL with psql -At as user postgres, prints rows
#   pg_backend_pid   prints the pid of that session's backend: a child of
#                    the postmaster, idle, alive until the test ends
# One of each per test.  They run as other users: their start makes $WORK
# searchable (chmod 711).  cleanup stops them even when a test dies:
# nginx's master gets SIGTERM (it ends and reaps its workers), the
# postmaster SIGQUIT (immediate shutdown: its children end, its shared
# memory is removed); each with its children SIGKILL after 10 s.
jf() {
    python3 -c '
import json, os, re, sys
t = sys.stdin.read()
d = json.JSONDecoder().raw_decode(t[re.search(r"^[[{]", t, re.M).start():])[0]
exec(os.environ.get("JF_DEFS", ""))
print(eval(sys.argv[1]))' "$1" <<<"$OUT"
}
# dump_series N [DIR]: the commands (for -x) of a series taken by hand:
# prof on, a pause, then N dumps 2 s apart (saved as DIR/dK.heap when DIR
# is given)
dump_series() {
    local i
    echo "prof on"
    echo "sleep 2"
    for ((i = 1; i <= $1; i++)); do
        echo "dump${2:+ $2/d$i.heap}"
        [ "$i" -lt "$1" ] && echo "sleep 2"
    done
}
start_redis() {
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    MALLOC_CONF=prof:true,prof_active:false redis-server --port "$port" --bind 127.0.0.1 \
        --save '' --appendonly no --dir "$WORK" >"$WORK/redis.log" 2>&1 &
    PID=$!
    PIDS+=("$PID")
    wait_until 10 "redis answers PING" sh -c "redis-cli -p $port ping 2>/dev/null | grep -q PONG"
}

# build_id FILE: its GNU build-id in hex ("" when none).
build_id() { readelf -n "$1" | awk '/Build ID:/ {print $3}'; }

# debuginfod_serves PORT BUILD-ID KIND: the debuginfod server on PORT
# answers 200 for that build's KIND (debuginfo, executable).
debuginfod_serves() {
    python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=5).read()' \
        "http://127.0.0.1:$1/buildid/$2/$3" 2>/dev/null
}

# free_port: a loopback TCP port nobody listens on now.
free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# One nginx per test (its files are $WORK/nginx/*).
start_nginx() {
    local user=${1:-www-data} dir=$WORK/nginx
    [ -z "${NGINX_MASTER:-}" ] || die "start_nginx: nginx runs already"
    NGINX_PORT=$(free_port)
    port=$NGINX_PORT
    chmod 711 "$WORK"
    mkdir -p "$dir/www" "$dir/tmp"
    echo "memprof nginx test page" >"$dir/www/index.html"
    chmod -R a+rX "$dir/www"
    cat >"$dir/nginx.conf" <<EOF
daemon off;
master_process on;
worker_processes 2;
user $user $(id -gn "$user");
pid $dir/nginx.pid;
error_log $dir/nginx.err;
events { worker_connections 64; }
http {
    access_log off;
    keepalive_requests 10000000;
    default_type text/plain;
    client_body_temp_path $dir/tmp/body;
    proxy_temp_path $dir/tmp/proxy;
    fastcgi_temp_path $dir/tmp/fastcgi;
    uwsgi_temp_path $dir/tmp/uwsgi;
    scgi_temp_path $dir/tmp/scgi;
    server {
        listen 127.0.0.1:$NGINX_PORT;
        root $dir/www;
    }
}
EOF
    nginx -c "$dir/nginx.conf" -p "$dir" >"$dir/nginx.out" 2>&1 &
    PID=$!
    NGINX_MASTER=$PID
    PIDS+=("$PID")
    CLEANUP_HOOKS+=(stop_nginx)
    wait_until 10 "nginx to serve its page on port $NGINX_PORT" nginx_up
    wait_until 10 "nginx to start 2 workers" nginx_workers 2
}
nginx_up() {
    curl -sf "http://127.0.0.1:$NGINX_PORT/" 2>/dev/null | grep -q 'memprof nginx test page' && return 0
    alive "$NGINX_MASTER" ||
        die "nginx exited early: $(cat "$WORK/nginx/nginx.out" "$WORK/nginx/nginx.err" 2>/dev/null)"
    return 1
}
nginx_workers() { [ "$(pgrep -c -P "$NGINX_MASTER")" -ge "$1" ]; }
nginx_worker_pid() { pgrep -P "$NGINX_MASTER" | sort -n | head -1; }
# cleanup hook: fast shutdown (SIGTERM: the master ends its workers and
# reaps them); SIGKILL to master and workers after 10 s (a master killed
# alone would leave its workers serving).
stop_nginx() { stop_server "$NGINX_MASTER" TERM "nginx master"; }

# One postgres per test (its files are $WORK/pg, $WORK/pgsock, $WORK/pg*).
PG_BIN=/usr/lib/postgresql/15/bin
start_postgres() {
    [ -z "${PG_MASTER:-}" ] || die "start_postgres: postgres runs already"
    PG_PORT=$(free_port)
    port=$PG_PORT
    PGSOCK=$WORK/pgsock
    chmod 711 "$WORK"
    mkdir -p "$WORK/pg" "$PGSOCK"
    chown postgres:postgres "$WORK/pg" "$PGSOCK"
    chmod 700 "$WORK/pg"
    setpriv --reuid=postgres --regid=postgres --init-groups -- "$PG_BIN/initdb" -D "$WORK/pg" \
        -U postgres --auth=trust --no-locale -E UTF8 --no-sync --no-instructions \
        >"$WORK/initdb.log" 2>&1 || die "initdb failed: $(tail -5 "$WORK/initdb.log")"
    # setpriv execs: $! is the postmaster itself (runuser would stay its
    # parent, and a shell function would run in a subshell of its own)
    setpriv --reuid=postgres --regid=postgres --init-groups -- "$PG_BIN/postgres" -D "$WORK/pg" \
        -k "$PGSOCK" -p "$PG_PORT" -c listen_addresses= >"$WORK/pg.log" 2>&1 &
    PID=$!
    PG_MASTER=$PID
    PIDS+=("$PID")
    CLEANUP_HOOKS+=(stop_postgres)
    wait_until 30 "postgres to answer psql on $PGSOCK port $PG_PORT" pg_up
    [ "$(head -1 "$WORK/pg/postmaster.pid")" = "$PID" ] ||
        die "postmaster.pid names $(head -1 "$WORK/pg/postmaster.pid"), not $PID"
    # The idle session behind pg_backend_pid: psql's input is a FIFO whose
    # writer asks for the backend's pid and then sleeps, holding it open,
    # so psql waits there and its backend idles in a wait on its socket.
    mkfifo "$WORK/pgsession.in"
    { echo 'select pg_backend_pid();'; exec sleep 3600; } >"$WORK/pgsession.in" 2>/dev/null &
    PIDS+=("$!")
    psql -h "$PGSOCK" -p "$PG_PORT" -U postgres -X -At <"$WORK/pgsession.in" >"$WORK/pgsession.out" 2>&1 &
    PIDS+=("$!")
    wait_until 10 "the idle psql session to print its backend's pid" \
        grep -Eq '^[0-9]+$' "$WORK/pgsession.out"
    PG_BACKEND=$(grep -Em1 '^[0-9]+$' "$WORK/pgsession.out")
}
pg_up() {
    [ "$(pg_sql 'select 1' 2>/dev/null)" = 1 ] && return 0
    alive "$PG_MASTER" || die "postgres exited early: $(tail -5 "$WORK/pg.log")"
    return 1
}
pg_sql() { psql -h "$PGSOCK" -p "$PG_PORT" -U postgres -X -At -c "$1"; }
pg_backend_pid() { echo "$PG_BACKEND"; }
# cleanup hook: immediate shutdown (SIGQUIT: the postmaster ends its
# children and removes its shared memory, which SIGKILL would leave
# behind); SIGKILL to it and its children after 10 s.
stop_postgres() { stop_server "$PG_MASTER" QUIT postmaster; }
# stop_server PID SIGNAL NAME: SIGCONT first (a tracer that died may have
# left it stopped), then SIGNAL; SIGKILL to it and its children if it has
# not ended after 10 s.
stop_server() {
    kill -CONT "$1" 2>/dev/null
    kill -"$2" "$1" 2>/dev/null
    holds wait_until 10 "$3 $1 to shut down" ended "$1" ||
        kill -9 "$1" $(pgrep -P "$1") 2>/dev/null
    return 0
}

# One Apache 2.4 (mpm_event) per test, its files in $WORK/apache, one child
# process of THREADS threads (start_apache THREADS): sets APACHE (the
# parent's pid) and APACHE_PORT; cleanup stops it (SIGTERM, then SIGKILL).
start_apache() {
    local dir=$WORK/apache threads=$1
    APACHE_PORT=$(free_port)
    chmod 711 "$WORK"
    mkdir -p "$dir/htdocs" "$dir/logs" "$dir/run"
    echo "memprof apache test page" >"$dir/htdocs/index.html"
    chmod -R a+rX "$dir/htdocs"
    cat >"$dir/httpd.conf" <<CONF
ServerRoot $dir
ServerName localhost
Listen 127.0.0.1:$APACHE_PORT
PidFile $dir/run/httpd.pid
DefaultRuntimeDir $dir/run
ErrorLog $dir/logs/error.log
LoadModule mpm_event_module /usr/lib/apache2/modules/mod_mpm_event.so
LoadModule authz_core_module /usr/lib/apache2/modules/mod_authz_core.so
User www-data
Group www-data
DocumentRoot $dir/htdocs
<Directory $dir/htdocs>
    Require all granted
</Directory>
ServerLimit 1
StartServers 1
ThreadLimit $threads
ThreadsPerChild $threads
MaxRequestWorkers $threads
MinSpareThreads 1
MaxSpareThreads $threads
CONF
    /usr/sbin/apache2 -f "$dir/httpd.conf" -DFOREGROUND >"$dir/out" 2>&1 &
    APACHE=$!
    PIDS+=("$APACHE")
    CLEANUP_HOOKS+=(stop_apache)
    wait_until 20 "apache2 to serve its page on port $APACHE_PORT" apache_up
}
stop_apache() { stop_server "$APACHE" TERM "apache2 parent"; }
apache_up() {
    curl -sf "http://127.0.0.1:$APACHE_PORT/index.html" 2>/dev/null |
        grep -q 'memprof apache test page' && return 0
    alive "$APACHE" ||
        die "apache2 exited early: $(cat "$WORK/apache/out" "$WORK/apache/logs/error.log" 2>/dev/null)"
    return 1
}

# --- memprof's heap sampler (t_sampler_*) ------------------------------------
#   got_into_sampler PID   prints how many call-table slots (the
#                          JUMP_SLOT, GLOB_DAT and 64-bit relocations (x86-64
#                          or arm64) of
#                          every mapped ELF object, read live from
#                          /proc/PID/mem at the object's load address) hold
#                          an address inside the process's
#                          memfd:memprof-sampler mappings (0 when it has
#                          none); the slots found, and how many slots it
#                          read, on stderr
#   sampler_regions PID    prints how many sampler gates (stand-ins' pages,
#                          memfd:memprof-sampler) are mapped
#   sampler_bodies PID     prints how many sampler bodies
#                          (memfd:memprof-sampler-body) are mapped
#   sampler_ctl PID FIELD  prints a field of the sampler's struct
#                          sampler_ctl (allocator/sampler/abi.h: state,
#                          npatches, samples, live, map_live, memprof_pid,
#                          ...; offsets of SAMPLER_ABI 4), read
#                          from the body's data at +0x10000
#   sampler_state_is PID N ctl.state is N (0 off, 1 on, 2 orphan); with no
#                          body mapped, the gate's state
#   sampler_gate PID FIELD prints a field of the gate's data page (mark,
#                          state, inside: the lanes' sum) or its header
#                          (pid)
#   sampler_smaps PID      prints "SIZE RSS" (KiB) of all memprof's
#                          mappings (gates and bodies, with the anonymous
#                          data page or pages after each)
#   sampler_gate_only SR   SR (sampler_smaps's) is one gate: 8 KiB mapped,
#                          at most 8 KiB resident
got_into_sampler() {
python3 - "$1" <<'PY'
import os, struct, subprocess, sys
pid = sys.argv[1]
maps = [l.split() for l in open(f"/proc/{pid}/maps")]
region = [tuple(int(x, 16) for x in f[0].split("-")) for f in maps
          if len(f) >= 6 and f[5] == "/memfd:memprof-sampler"]
objs = {}
for f in maps:
    if len(f) >= 6 and f[5].startswith("/") and not f[5].startswith("/memfd:") and len(f) == 6:
        start = int(f[0].split("-")[0], 16)
        if int(f[2], 16) == 0 and f[5] not in objs:
            objs[f[5]] = start
inside = read = 0
with open(f"/proc/{pid}/mem", "rb") as mem:
    for path, start in objs.items():
        try:
            with open(path, "rb") as e:
                hdr = e.read(64)
                if hdr[:4] != b"\x7fELF":
                    continue
                e_type, = struct.unpack_from("<H", hdr, 16)
                phoff, = struct.unpack_from("<Q", hdr, 32)
                phentsize, phnum = struct.unpack_from("<HH", hdr, 54)
                e.seek(phoff)
                ph = e.read(phentsize * phnum)
        except OSError:
            continue
        loads = [struct.unpack_from("<IIQQ", ph, i * phentsize) for i in range(phnum)]
        vaddr = min((p[3] for p in loads if p[0] == 1), default=0) & ~0xfff
        bias = start - vaddr if e_type == 3 else 0
        rel = subprocess.run(["readelf", "-rW", path], capture_output=True, text=True).stdout
        for line in rel.splitlines():
            w = line.split()
            if len(w) < 3 or w[2] not in ("R_X86_64_JUMP_SLOT", "R_X86_64_GLOB_DAT", "R_X86_64_64",
                                          "R_AARCH64_JUMP_SLOT", "R_AARCH64_GLOB_DAT", "R_AARCH64_ABS64"):
                continue
            slot = bias + int(w[0], 16)
            try:
                mem.seek(slot)
                v, = struct.unpack("<Q", mem.read(8))
            except (OSError, struct.error):
                continue
            read += 1
            if any(a <= v < b for a, b in region):
                inside += 1
                print(f"  slot {slot:#x} of {path} ({w[4] if len(w) > 4 else '?'}) -> {v:#x}",
                      file=sys.stderr)
print(f"  {inside} of {read} slots read point into the sampler", file=sys.stderr)
if read == 0:
    sys.exit("read no call-table slot at all")
print(inside)
PY
}
sampler_regions() { grep -c ' r-xp .*/memfd:memprof-sampler (deleted)$' "/proc/$1/maps"; }
sampler_bodies() { grep -c ' r-xp .*/memfd:memprof-sampler-body (deleted)$' "/proc/$1/maps"; }
sampler_ctl() {
python3 - "$1" "$2" <<'PY'
import struct, sys
pid, field = sys.argv[1], sys.argv[2]
layout = {"magic": (0, "Q"), "abi": (8, "I"), "state": (12, "I"), "generation": (16, "Q"),
          "tgid": (24, "q"), "watch_fd": (32, "i"), "lg_sample": (36, "I"),
          "nrows": (176, "Q"), "npatches": (184, "Q"), "memprof_pid": (192, "q"),
          "samples": (200, "Q"), "dropped": (208, "Q"), "truncated": (216, "Q"),
          "live": (224, "Q"), "probe": (244, "I"), "gate": (248, "Q"),
          "map_live": (264, "Q")}
start = next(int(f[0].split("-")[0], 16) for f in map(str.split, open(f"/proc/{pid}/maps"))
             if len(f) >= 6 and f[5] == "/memfd:memprof-sampler-body" and "x" in f[1])
off, fmt = layout[field]
with open(f"/proc/{pid}/mem", "rb") as mem:
    mem.seek(start + 0x10000 + off)
    print(struct.unpack("<" + fmt, mem.read(struct.calcsize(fmt)))[0])
PY
}
sampler_state_is() {
    if [ "$(sampler_bodies "$1")" -gt 0 ]; then
        [ "$(sampler_ctl "$1" state 2>/dev/null)" = "$2" ]
    else
        [ "$(sampler_gate "$1" state 2>/dev/null)" = "$2" ]
    fi
}
sampler_gate_addr() {      # the gate's data page, decimal
    local a
    a=$(awk '$6 == "/memfd:memprof-sampler" && $2 ~ /x/ {print $1; exit}' "/proc/$1/maps")
    [ -n "$a" ] && echo $((0x${a%-*} + 4096))
}
sampler_gate() {
python3 - "$1" "$2" <<'PY'
import struct, sys
pid, field = sys.argv[1], sys.argv[2]
start = next(int(f[0].split("-")[0], 16) for f in map(str.split, open(f"/proc/{pid}/maps"))
             if len(f) >= 6 and f[5] == "/memfd:memprof-sampler" and "x" in f[1])
with open(f"/proc/{pid}/mem", "rb") as mem:
    if field == "pid":
        mem.seek(start + 280)
        print(struct.unpack("<q", mem.read(8))[0])
        sys.exit(0)
    mem.seek(start + 0x1000)
    page = mem.read(4096)
mark, state = struct.unpack_from("<QI", page, 0)
inside = sum(struct.unpack_from("<q", page, 176 + 64 * i)[0] for i in range(32))
print({"mark": mark, "state": state, "inside": inside}[field])
PY
}
sampler_gate_only() { [ "${1% *}" = 8 ] && [ "${1#* }" -le 8 ]; }
sampler_smaps() {
python3 - "$1" <<'PY'
import re, sys
pid = sys.argv[1]
maps, cur = [], None
for line in open(f"/proc/{pid}/smaps"):
    m = re.match(r"^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$", line)
    if m:
        cur = {"start": int(m.group(1), 16), "end": int(m.group(2), 16), "path": m.group(4)}
        maps.append(cur)
    elif cur is not None and ":" in line:
        k, v = line.split(":", 1)
        if k in ("Size", "Rss"):
            cur[k] = int(v.split()[0])
size = rss = 0
for i, e in enumerate(maps):
    if e["path"] in ("/memfd:memprof-sampler (deleted)", "/memfd:memprof-sampler-body (deleted)"):
        parts = [e]
        if i + 1 < len(maps) and maps[i + 1]["start"] == e["end"] and not maps[i + 1]["path"]:
            parts.append(maps[i + 1])
        for p in parts:
            size += p["Size"]; rss += p["Rss"]
            print(f"  {p['start']:x}-{p['end']:x} {p['path'] or '(its data)'}: Size {p['Size']} kB, Rss {p['Rss']} kB", file=sys.stderr)
print(size, rss)
PY
}
# owner_page_ok PID: the sampler's gate data page (abi.h: right after the
# stand-ins' page) is a private anonymous read+write page of the process
# holding the mark.
owner_page_ok() {
python3 - "$1" "$(sampler_gate_addr "$1")" <<'PY'
import struct, sys
pid, page = sys.argv[1], int(sys.argv[2])
maps = [l.split() for l in open(f"/proc/{pid}/maps")]
hit = [f for f in maps if int(f[0].split("-")[0], 16) <= page < int(f[0].split("-")[1], 16)]
if page == 0 or not hit or hit[0][1] != "rw-p" or len(hit[0]) > 5:
    sys.exit(f"owner page {page:#x}: {hit[0] if hit else 'not mapped'}")
with open(f"/proc/{pid}/mem", "rb") as mem:
    mem.seek(page)
    mark = struct.unpack("<Q", mem.read(8))[0]
sys.exit(0 if mark == 0x6d656d70726f6621 else f"owner page holds {mark:#x}")
PY
}

# start_serve ARGS...: memprof serve on a free loopback port (port 0: the
# kernel's choice, read from its first line), its stderr in $SERVE_LOG
# (one file per agent); sets SERVE_PID and SERVE_URL.
SERVES=0
start_serve() {
    SERVES=$((SERVES + 1))
    SERVE_LOG=$WORK/serve.$SERVES.log
    "$MEMPROF" serve --listen 127.0.0.1:0 "$@" 2>"$SERVE_LOG" &
    SERVE_PID=$!
    PIDS+=("$SERVE_PID")
    wait_until 10 "memprof serve to listen" grep -q 'listening on 127.0.0.1:' "$SERVE_LOG"
    SERVE_URL=http://127.0.0.1:$(grep -o 'listening on 127.0.0.1:[0-9]*' "$SERVE_LOG" | cut -d: -f2)
}
# http METHOD PATH [CURL ARGS...]: the agent's answer, body in $WORK/body,
# status in $STATUS, headers in $WORK/headers.
http() {
    local method=$1 path=$2; shift 2
    STATUS=$(curl -s -X "$method" -D "$WORK/headers" -o "$WORK/body" -w '%{http_code}' \
             --max-time 120 "$@" "$SERVE_URL$path")
    echo "$method $path -> $STATUS: $(head -c 300 "$WORK/body" | tr -d '\0')" >&2
}
status_is() { [ "$STATUS" = "$1" ]; }
body_has() { grep -Eqa -- "$1" "$WORK/body"; }
header_has() { grep -Eqi -- "$1" "$WORK/headers"; }

# start_prometheus: Debian's prometheus on a free loopback port with the
# configuration in $WORK/prometheus.yml (PROM_PORT set).  prom_query EXPR:
# true when EXPR has a result now (its JSON in $WORK/q.json).
start_prometheus() {
    PROM_PORT=$(free_port)
    prometheus --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/prom" \
        --web.listen-address="127.0.0.1:$PROM_PORT" >"$WORK/prometheus.log" 2>&1 &
    PIDS+=("$!")
}
prom_query() {
    curl -s --max-time 5 "http://127.0.0.1:$PROM_PORT/api/v1/query" \
        --data-urlencode "query=$1" >"$WORK/q.json" 2>/dev/null &&
        python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not d["data"]["result"])' "$WORK/q.json" 2>/dev/null
}
