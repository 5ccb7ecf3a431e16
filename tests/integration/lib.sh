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
PIDS=()
CHECKS_FAILED=0
cleanup() {
    local rc=$?
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

wait_until() {
    local secs=$1 what=$2; shift 2
    local deadline
    deadline=$(awk -v s="$secs" -v k="$SLOW" 'BEGIN { printf "%d", s * k * 20 }')
    local i=0
    while ! "$@"; do
        i=$((i + 1))
        [ "$i" -ge "$deadline" ] && die "timed out after $(awk -v s="$secs" -v k="$SLOW" 'BEGIN{print s*k}') s waiting for: $what"
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
    local i
    for i in $(seq 200); do
        grep -q '^ready' "$out" 2>/dev/null && return 0
        alive "$PID" || die "target $name exited early: $(cat "$WORK/$name.stderr")"
        sleep 0.1
    done
    die "target $name did not print ready within 20 s"
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
alive() {
    local f st
    for f in /proc/"$1"/task/*/status; do
        st=$(awk '/^State:/ {print $2}' "$f" 2>/dev/null) || continue
        [ -n "$st" ] && [ "$st" != Z ] && return 0
    done
    return 1
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
    local task tid
    for task in /proc/"$1"/task/*; do
        tid=${task##*/}
        [ "$(tracer_of "$1/task/$tid")" = 0 ] || die "thread $tid of process $1 still traced by $(tracer_of "$1/task/$tid")"
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
# call *%rax; mov %eax,%edi; mov %rbx,%rsp; mov $15,%eax; syscall).
TRAMPOLINE=ffd089c74889dcb80f0000000f05

# entry_bytes PID [HEX]: print the 14 bytes at the program's entry point as
# hex, after writing HEX there when given.
entry_bytes() {
python3 - "$@" <<'PY'
import os, struct, sys
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
    print(mem.read(14).hex())
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
python3 - "$1" "$2" "${3:-}" <<'PY' || die "process $1: code differs from its files"
import os, struct, sys
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
            live[o:o + 14] = disk[o:o + 14]
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
# in open() of that FIFO (creat 85; open 2 / openat 257 too), which jemalloc
# 5.3 does until someone opens it for reading, with memprof tracing it.
start_blocked_dump() {
    [ -p "$WORK/dumpfifo" ] || mkfifo "$WORK/dumpfifo"
    "$@" "$MEMPROF" -p "$PID" -e "mallctl prof.dump $WORK/dumpfifo" >"$WORK/mp.out" 2>"$WORK/mp.err" &
    MP=$!
    local i
    for i in $(seq 200); do
        case "$(cut -d' ' -f1 "/proc/$PID/syscall" 2>/dev/null)" in
        2|85|257) [ "$(tracer_of "$PID")" = "$MP" ] && return 0 ;;
        esac
        sleep 0.05
    done
    die "the target never blocked in open() of the dump FIFO: $(cat "$WORK/mp.err")"
}

# check_reader FIFO: a sleepers target parked in read() of FIFO gets the
# whole message in one read, its context unchanged ("read ok").
FIFO_MESSAGE='memprof-fifo-message-0123456789'
check_reader() {
    printf '%s\n' "$FIFO_MESSAGE" >"$1"
    local i
    for i in $(seq 50); do grep -q 'read ok\|BAD' "$TARGET_OUT" && break; sleep 0.1; done
    grep -q 'read ok' "$TARGET_OUT" ||
        die "reader: $(grep -m1 BAD "$TARGET_OUT" || tail -2 "$TARGET_OUT")"
}

# The in-use total of an alloc_sites dump as memprof prints it: 78.1 MiB
# allocated; leak_small's 1 KiB blocks are sampled (about one per KiB), so
# the estimate varies by a few tenths of a MiB either way.
ALLOC_SITES_TOTAL='(77\.[5-9]|78\.[0-9]) MiB'

# --- JSON and redis helpers --------------------------------------------------
#   jf EXPR          a Python expression over the first JSON document in $OUT
#                    (after memprof's "attached to" line): d is the document;
#                    $JF_DEFS may hold Python that defines more names
#   start_redis      Debian's redis-server with MALLOC_CONF=prof:true,
#                    prof_active:false on a free loopback port: sets $PID, $port
jf() {
    python3 -c '
import json, os, re, sys
t = sys.stdin.read()
d = json.JSONDecoder().raw_decode(t[re.search(r"^[[{]", t, re.M).start():])[0]
exec(os.environ.get("JF_DEFS", ""))
print(eval(sys.argv[1]))' "$1" <<<"$OUT"
}
start_redis() {
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    MALLOC_CONF=prof:true,prof_active:false redis-server --port "$port" --bind 127.0.0.1 \
        --save '' --appendonly no --dir "$WORK" >"$WORK/redis.log" 2>&1 &
    PID=$!
    PIDS+=("$PID")
    wait_until 10 "redis answers PING" sh -c "redis-cli -p $port ping 2>/dev/null | grep -q PONG"
}
