# Programs in real podman containers whose files are not where their
# paths say, driven from the host with their host PIDs (bookworm, default
# seccomp profile and capabilities):
#  - a deleted executable: a jemalloc program copied into the container's
#    own layer, started, then removed inside the container; `info`, and a
#    `prof on`/`dump`/`top` that names its own function (main, with the
#    64 MiB it grew) from the deleted file;
#  - a chrooted daemon: the same program run by chroot(1) inside the
#    container in /jail, holding it and its libraries.  Its /proc/PID/maps
#    names paths as the container has them (/jail/...), which under its
#    /proc/PID/root (the chroot) name nothing: `info` finds jemalloc, and
#    a profiled dump's `top` names main, read through map_files.
# Each process answers afterwards and is left running, untraced.
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/integration/containers.sh"
# Sampling every 64 KiB on average from the start (a rate set later
# applies only after each thread's next sample): each 1 MiB block the
# program grows by is sampled but with a chance of e^-16, so the 64 MiB
# are counted whole.
EXACT=prof:true,prof_active:false,lg_prof_sample:16

PROG=/usr/local/bin/memprof-grow-in-container
# profile_growth WHAT OUTF: prof on, one growth of 64 MiB, dump and top in
# one session; main must hold the 64 MiB, the target must be untouched.
profile_growth() {
    local what=$1 outf=$2 got
    session_open "$what"
    session_send 'prof on' 'profiling is now on'
    kill -USR1 "$CPID"
    wait_until 20 "the $what program to grow" file_has "$outf" '^grown 64'
    session_send dump '^dump1: [0-9]+ stacks'
    session_send 'top --json 10' '^}'
    session_send 'prof off' 'profiling is now off'
    close_session
    check "$what: prof on, dump, top, prof off" [ "$MPRC" = 0 ]
    OUT=$(session_out)
    got=$(flat_bytes_of main)
    check "$what top: main holds the 64 MiB it grew ($got)" [ "${got:-0}" -ge $((64 * 1024 * 1024)) ]
    check "$what: untouched" untouched "$CPID"
    kill -USR1 "$CPID"
    check "$what: the program still answers" within 20 file_has "$outf" '^grown 128'
}

# --- a deleted executable ----------------------------------------------------
FILES="$TARGETS/grow_on_signal:$PROG" container_start bookworm \
    -e MALLOC_CONF=$EXACT -- sh -c "exec $PROG >/tmp/target.out 2>&1"
OUTF=$(in_container /tmp/target.out)
wait_until 20 "the program in $CNAME to print ready" file_has "$OUTF" '^ready'
cexec rm "$PROG"
check "deleted: the executable is gone from the container" [ ! -e "$(in_container "$PROG")" ]
check "deleted: the kernel says so" bash -c '[[ "$(readlink /proc/$1/exe)" == *" (deleted)" ]]' _ "$CPID"
mp -p "$CPID" -e info
check "deleted info: attached" mp_ok
check "deleted info: jemalloc found in the container's library" \
    out_has '^  found in +/usr/lib/x86_64-linux-gnu/libjemalloc\.so\.2 \(shared object\)'
check "deleted info: the executable named, and said to be deleted" out_has "^executable +$PROG \(deleted\)"
profile_growth deleted "$OUTF"

# --- a chrooted daemon inside the container ----------------------------------
# The chroot holds the program and what ldd lists for it, copied as the
# container has them, its /tmp (sticky, writable), and a /proc of the
# container's PID namespace: jemalloc 5.3 writes a dump's mapped-library
# list from /proc/self/maps and, without one, leaves the dump incomplete
# (a chroot without /proc: see docs/containers.md).  Mounting it needs
# CAP_SYS_ADMIN in the container.
JAIL_SETUP='set -e; J=/jail; mkdir -p $J/tmp $J/proc; chmod 1777 $J/tmp; cp '"$PROG"' $J/memprof-jailed
for l in $(ldd $J/memprof-jailed | grep -o "/[^ ]*"); do mkdir -p $J$(dirname $l); cp -L $l $J$l; done
mount -t proc proc $J/proc
exec chroot $J /memprof-jailed >$J/tmp/target.out 2>&1'
FILES="$TARGETS/grow_on_signal:$PROG" container_start bookworm --cap-add SYS_ADMIN \
    -e MALLOC_CONF=$EXACT -- sh -c "$JAIL_SETUP"
# (its /proc/PID/root is the chroot once chroot(1) has run the program)
OUTF=$(in_container /tmp/target.out)
wait_until 20 "the chrooted program in $CNAME to print ready" file_has "$OUTF" '^ready'
check "chroot: the program's root is the chroot, not the container's" \
    [ -e "/proc/$CPID/root/memprof-jailed" ]
check "chroot: its maps name paths in the container, not the chroot" grep -q " /jail/memprof-jailed$" "/proc/$CPID/maps"
mp -p "$CPID" -e info
check "chroot info: attached" mp_ok
check "chroot info: the executable by the container's path" out_has '^executable +/jail/memprof-jailed$'
check "chroot info: jemalloc found, by the container's path" \
    out_has '^  found in +/jail/lib/x86_64-linux-gnu/libjemalloc\.so\.2 \(shared object\)'
profile_growth chroot "$OUTF"
leftovers() { find "/proc/$CPID/root/tmp" -maxdepth 1 -name 'memprof*' 2>/dev/null; }
check "chroot: nothing of memprof's left in the chroot's /tmp" [ -z "$(leftovers)" ]
