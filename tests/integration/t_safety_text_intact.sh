# The target is left exactly as it was (FIELD-NOTES 3, rule 9): after a
# session of calls, every executable mapping of the program and of
# libjemalloc holds the same bytes as its file, trampoline bytes included;
# and the session left no mapping behind.
. "$SRCDIR/tests/integration/lib.sh"
start_target session_idle
cp "/proc/$PID/maps" "$WORK/maps.before"
mp -p "$PID" -e info -e 'prof on' -e dump -e 'prof sample 18' -e 'prof off' -e info
assert_ok
assert_untouched "$PID"

python3 - "$PID" <<'PY' || die "text differs from the files"
import sys
pid = sys.argv[1]
checked = 0
with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb") as mem:
    for line in maps:
        f = line.split()
        if len(f) < 6 or "x" not in f[1] or not f[5].startswith("/"):
            continue
        if not (f[5].endswith("session_idle") or "libjemalloc" in f[5]):
            continue
        start, end = (int(x, 16) for x in f[0].split("-"))
        off = int(f[2], 16)
        mem.seek(start)
        live = mem.read(end - start)
        with open(f[5], "rb") as obj:
            obj.seek(off)
            disk = obj.read(end - start)
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
# no file mapping added, removed or re-protected by the session (anonymous
# ones are jemalloc's own business: it maps memory as the process allocates)
files() { awk '$6 ~ /^\// {print $1, $2, $6}' "$1"; }
diff <(files "$WORK/maps.before") <(files "/proc/$PID/maps") \
    || die "the session changed the process's file mappings"
echo "text intact"
