# Where memprof's heap sampler cannot go, 'prof on' is refused with the
# reason, fails (non-zero exit), and nothing is mapped into the process:
# glibc malloc linked into a static executable (no call table), a
# process under a seccomp filter that would kill it for one of the
# sampler's system calls (t_sampler_seccomp has the other verdicts), and
# an allocator memprof does not know (a bump allocator LD_PRELOADed).
. "$SRCDIR/tests/integration/lib.sh"

# refused LABEL REASON_RE: 'prof on' on $PID failed, said REASON_RE,
# mapped nothing, left the process running untraced.
refused() {
    mp -p "$PID" -e 'prof on'
    check "$1: prof on fails" mp_failed
    check "$1: the message names the reason" err_has "$2"
    check "$1: nothing mapped (no memprof-sampler in maps)" file_lacks "/proc/$PID/maps" memprof-sampler
    check "$1: no sampler pipe or memfd left in the process" \
        bash -c '! ls -l /proc/$1/fd | grep -q "memfd:memprof"' _ "$PID"
    check "$1: the process is left running, untraced" untouched "$PID"
    mp -p "$PID" -e dump
    check "$1: dump refused too" mp_failed
}

CONF= start_target static_glibc
refused "static glibc" "process $PID has its allocator linked into the executable: its calls to malloc\(\) are direct"

# A filter that kills ppoll (the sampler polls memprof's pipe with it)
CONF= start_target seccomp_profile kill-ppoll
check "seccomp: the target runs under a filter" file_has "/proc/$PID/status" '^Seccomp:[[:space:]]*2'
refused "seccomp" "process $PID's seccomp filter would kill the process \(SIGSYS\) for ppoll"

CONF= LD_PRELOAD="$TARGETS/bump_malloc.so" start_target nojemalloc
refused "unknown allocator" "process $PID's malloc\(\) is an allocator memprof does not know"
