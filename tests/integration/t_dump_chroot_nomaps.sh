# A jemalloc daemon chroot()ed without a /proc inside its chroot: jemalloc
# writes a dump's list of mappings (MAPPED_LIBRARIES) from /proc/self/maps,
# cannot open it there, and ends the dump after its last stack.  memprof
# must keep every stack (not take the file for one cut short and drop the
# last), add the process's maps as read on the host to the dump it took
# (the saved file, its top, and a reading of that file elsewhere name the
# frames), and say so; offline, the same dump without maps keeps every
# stack and says that frames cannot be named, and why.  The chroot is a
# plain chroot(1) on the host holding the program and its libraries.
. "$SRCDIR/tests/integration/lib.sh"

[ "$(id -u)" -eq 0 ] || die "this test must run as root"
JAIL=$WORK/jail
mkdir -p "$JAIL/tmp"
chmod 1777 "$JAIL/tmp"
cp "$TARGETS/grow_on_signal" "$JAIL/grow"
for l in $(ldd "$JAIL/grow" | grep -o '/[^ ]*'); do
    mkdir -p "$JAIL$(dirname "$l")"
    cp -L "$l" "$JAIL$l"
done
# Sampling every 64 KiB from the start: each 1 MiB block is sampled.
MALLOC_CONF=prof:true,prof_active:false,lg_prof_sample:16 \
    chroot "$JAIL" /grow >"$WORK/jail.out" 2>"$WORK/jail.err" &
PID=$!
PIDS+=("$PID")
TARGET_OUT=$WORK/jail.out
wait_until 20 "the chrooted program to print ready" target_ready grow
check "the chroot has no /proc" [ ! -e "$JAIL/proc" ]
check "the program's root is the chroot" [ -e "/proc/$PID/root/grow" ]

mp -p "$PID" -e 'prof on'
check "prof on" out_has 'profiling is now on'
kill -USR1 "$PID"
wait_until 20 "the program to grow 64 MiB" file_has "$WORK/jail.out" '^grown 64'
mp -p "$PID" -e "dump $WORK/d1.heap" -e 'top 5' -e 'prof off'
check "dump, top, prof off" mp_ok
stacks=$(grep -c '^@' "$WORK/d1.heap")
check "the dump keeps every stack jemalloc wrote ($stacks)" \
    out_has "^dump1: $stacks stacks, .*saved to $WORK/d1.heap"
check "the note says jemalloc wrote no maps and memprof added the host's" \
    err_has "process $PID's jemalloc wrote its dump without the list of its mappings \(MAPPED_LIBRARIES: it reads /proc/self/maps.*memprof added the process's mappings as read on the host \(/proc/$PID/maps\)"
check "top: main holds the 64 MiB it grew" out_has '^ +64\.0 MiB .* main$'
check "top: not said to be truncated" out_lacks 'truncated'
check "the saved file has the maps memprof added" file_has "$WORK/d1.heap" '^MAPPED_LIBRARIES:$'
check "the process lives on, untraced" untouched "$PID"
kill -USR1 "$PID"
check "the program still answers" within 20 file_has "$WORK/jail.out" '^grown 128'

# the saved file read elsewhere (another directory, no process): named
mkdir "$WORK/elsewhere"
mv "$WORK/d1.heap" "$WORK/d1.heap.buildids" "$WORK/elsewhere/"
mp "$WORK/elsewhere/d1.heap" -e 'top 5'
check "offline, moved: main named from the added maps" out_has '^ +64\.0 MiB .* main$'
check "offline, moved: every stack" out_has "\(d1\.heap, $stacks stacks\)"

# the dump as jemalloc wrote it, read offline: every stack, and why no name
sed '/^MAPPED_LIBRARIES:$/,$d' "$WORK/elsewhere/d1.heap" | head -c -1 >"$WORK/asis.heap"
check "as jemalloc wrote it: no maps, ends on a whole line" \
    bash -c '! grep -q MAPPED "$1" && [ "$(tail -c 1 "$1" | od -An -c | tr -d " ")" = "\n" ]' _ "$WORK/asis.heap"
mp "$WORK/asis.heap" -e 'top 5'
check "offline, no maps: every stack kept" out_has "\(asis\.heap, $stacks stacks\)"
check "offline, no maps: all the bytes (64 MiB and more)" out_has '^Total: 6[4-9]\.[0-9] MiB in use'
check "offline, no maps: said whole, not truncated" \
    err_has "no MAPPED_LIBRARIES section after its last stack \(the file ends whole there\); kept all $stacks stacks"
check "offline, no maps: says frames cannot be named, and why" \
    err_has "cannot read /proc/self/maps \(a daemon chroot\(\)ed without /proc\).*frames cannot be named"
check "offline, no maps: says what to do" err_has "take the dump with memprof from the live process"
