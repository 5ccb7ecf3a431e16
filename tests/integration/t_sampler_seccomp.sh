# memprof's heap sampler under seccomp filters (issue 33.1): memprof reads
# the process's filters and judges them on every system call the sampler
# makes inside it, instead of refusing every filtered process.  Targets
# built with libseccomp, as container runtimes build their filters:
# (a) podman's and Docker's kind of default (EPERM for any call not listed,
#     an allow list): 'prof on' goes in, a dump holds the target's
#     allocating function, 'prof off' takes it out, the process lives on;
# (b) a filter that kills ppoll: refused, naming ppoll and the kill, at
#     the prompt and by serve's POST /debug/pprof/heap (422); info's
#     remedy outside a container: a filter that allows ppoll;
# (c) a filter that fails process_vm_readv with EPERM (Docker's and
#     containerd's default profiles without CAP_SYS_PTRACE): the sampler
#     goes in checking stack pages with rt_sigprocmask (ctl.probe), its
#     stacks whole past a frame of 3 pages, nothing left open after
#     'prof off'; one that fails rt_sigprocmask too: refused, naming both;
# (d) memprof without CAP_SYS_ADMIN, a thread under a filter: refused,
#     saying the filter cannot be read and why;
# (e) filters of one thread only (no TSYNC): each different stack is read
#     from a thread that has it, whichever thread memprof stops first: the
#     default profile in the worker goes in, ppoll killed there is refused.
# (f) before 'prof on': 'info' and 'info --json' judge the filters as
#     'prof on' would (possible under (a), refused naming ppoll under (b));
#     serve's /processes, which reads no filter, says the process is
#     filtered and that the sampler is judged when asked for.
# A refusal maps nothing; every target survives, untraced.
. "$SRCDIR/tests/integration/lib.sh"

[ "$(id -u)" -eq 0 ] || die "this test must run as root"
filtered_threads() { grep -l '^Seccomp:[[:space:]]*2' /proc/"$1"/task/*/status 2>/dev/null | wc -l; }
send() {
    echo "$1" >&3
    wait_until 20 "the session to answer '$1'" grep -Eq -- "$2" "$WORK/s.out"
}
samples_taken() { [ "$(sampler_ctl "$PID" samples 2>/dev/null)" -gt 0 ] 2>/dev/null; }

# (a) the default profile
CONF= start_target seccomp_profile default
check "default: both threads run under the filter" [ "$(filtered_threads "$PID")" = 2 ]
# (f) info judges before prof on; /processes promises nothing
mp -p "$PID" -e 'info' -e 'info --json'
check "default: info says the sampler goes in, the filters judged" \
    out_has "memprof's sampler \('prof on' puts it in\).*seccomp filters, read and judged, let"
check "default: info --json: sampler possible, 1 filter" \
    [ "$(jf 'd["allocator"]["sampler"]["possible"], d["allocator"]["sampler"]["seccomp_filters"]')" = "(True, 1)" ]
check "default: the process lives on, untraced, after info" untouched "$PID"
start_serve --target comm=seccomp_profile
http GET /processes
OUT=$(cat "$WORK/body")
check "default: /processes says filtered, judged when asked for" \
    [ "$(jf "[p['profiling'] for p in d['processes'] if p['pid'] == $PID][0]['sampler']")" = "judged when asked for" ]
check "default: /processes names the filter count and why" \
    body_has "runs under seccomp filters \(1\): whether they let the sampler's system calls through is judged when the sampler is asked for"

open_session s
send 'prof sample 0' 'sampling every 2\^0 bytes'
send 'prof on' 'profiling is now on|prof:'
check "default: prof on went in" grep -q 'profiling is now on' "$WORK/s.out"
check "default: the walk checks pages with process_vm_readv (ctl.probe 0)" \
    [ "$(sampler_ctl "$PID" probe)" = 0 ]
check "default: no refusal" bash -c '! grep -q "seccomp filter.*does not put" "$1"' _ "$WORK/s.out"
wait_until 20 "the sampler to take samples" samples_taken
send "dump $WORK/d1.heap" '^dump1: [0-9]+ stacks'
send 'prof off' 'profiling is now off'
close_session
check "default: the session ended well" [ "$MPRC" = 0 ]
mp "$WORK/d1.heap" -e 'top 10'
check "default: the dump holds the target's allocating function" out_has 'seccomp_profile_alloc'
check "default: no GOT slot points into the sampler after prof off" [ "$(got_into_sampler "$PID")" = 0 ]
check "default: the process lives on, untraced" untouched "$PID"
check "default: the filter is still there" [ "$(filtered_threads "$PID")" = 2 ]

# refused LABEL REASON_RE: 'prof on' on $PID fails saying REASON_RE, maps
# nothing, leaves the process running untraced.
refused() {
    mp -p "$PID" -e 'prof on'
    check "$1: prof on fails" mp_failed
    check "$1: the message names the call and what the filter would do" err_has "$2"
    check "$1: nothing mapped (no memprof-sampler in maps)" file_lacks "/proc/$PID/maps" memprof-sampler
    check "$1: the process lives on, untraced" untouched "$PID"
}

# (b) ppoll killed
CONF= start_target seccomp_profile kill-ppoll
refused "kill ppoll" "process $PID's seccomp filter would kill the process \(SIGSYS\) for ppoll, a system call the sampler makes"
mp -p "$PID" -e 'info' -e 'info --json'
check "kill ppoll: info says no heap profile, naming ppoll and the kill" \
    out_has "heap profiling     not possible without a restart: process $PID's seccomp filter would kill the process \(SIGSYS\) for ppoll"
check "kill ppoll: info's remedy, outside a container: a filter that allows ppoll, or the restart with jemalloc" \
    out_has "; to profile it, restart it under a seccomp filter that allows ppoll, or restart it with LD_PRELOAD="
check "kill ppoll: info --json: sampler not possible, why names ppoll" \
    [ "$(jf '(d["allocator"]["sampler"]["possible"], "for ppoll" in d["allocator"]["sampler"]["why_not"])')" = "(False, True)" ]
check "kill ppoll: after info, nothing mapped" file_lacks "/proc/$PID/maps" memprof-sampler
check "kill ppoll: after info, the process lives on, untraced" untouched "$PID"

# serve's POST /debug/pprof/heap says the same, with 422
start_serve --allow-control
http POST "/debug/pprof/heap?pid=$PID&seconds=1"
check "kill ppoll: serve's POST answers 422" status_is 422
check "kill ppoll: serve's answer names ppoll and the kill" \
    body_has "seccomp filter would kill the process \(SIGSYS\) for ppoll"
check "kill ppoll: after serve, nothing mapped" file_lacks "/proc/$PID/maps" memprof-sampler
check "kill ppoll: after serve, the process lives on, untraced" untouched "$PID"

# (c) process_vm_readv failed with EPERM (Docker's and containerd's
# default profiles without CAP_SYS_PTRACE): the walk checks pages with
# rt_sigprocmask instead, and the stacks are whole past the 3 pages of
# seccomp_profile_far's frame, up to the worker
fd_count() { ls "/proc/$1/fd" | wc -l; }
CONF= start_target seccomp_profile errno-vm-readv
mp -p "$PID" -e info
check "errno process_vm_readv: info says the sampler goes in, its walk checking pages with rt_sigprocmask" \
    out_has "memprof's sampler \('prof on' puts it in\).*let the sampler's system calls through \(process_vm_readv denied: its stack walk checks pages with rt_sigprocmask\)"
FDS=$(fd_count "$PID")
rm -f "$WORK/s.cmds" "$WORK/s.out"
open_session s
send 'prof sample 0' 'sampling every 2\^0 bytes'
send 'prof on' 'profiling is now on|prof:'
check "errno process_vm_readv: prof on went in" grep -q 'profiling is now on' "$WORK/s.out"
check "errno process_vm_readv: the walk checks pages with rt_sigprocmask (ctl.probe 1)" \
    [ "$(sampler_ctl "$PID" probe)" = 1 ]
check "errno process_vm_readv: prof on says so" \
    grep -q "seccomp filter denies process_vm_readv: the sampler checks a stack page readable with rt_sigprocmask" "$WORK/s.out"
wait_until 20 "the sampler to take samples" samples_taken
send "dump $WORK/c.heap" '^dump1: [0-9]+ stacks'
send 'prof off' 'profiling is now off'
close_session
check "errno process_vm_readv: the session ended well" [ "$MPRC" = 0 ]
mp "$WORK/c.heap" -e 'top --cum 30'
check "errno process_vm_readv: the stacks reach the worker, past seccomp_profile_far's 3 pages" \
    holds eval 'assert_out "seccomp_profile_alloc" && assert_out "seccomp_profile_far" && assert_out " worker\$"'
check "errno process_vm_readv: nothing left open in the process after prof off" \
    [ "$(fd_count "$PID")" = "$FDS" ]
check "errno process_vm_readv: no GOT slot points into the sampler after prof off" \
    [ "$(got_into_sampler "$PID")" = 0 ]
check "errno process_vm_readv: the process lives on, untraced" untouched "$PID"

# (c') both ways denied: refused, naming both
CONF= start_target seccomp_profile errno-vm-readv-sigmask
refused "errno process_vm_readv and rt_sigprocmask" \
    "process $PID's seccomp filter would fail it with errno 1 \(EPERM\) for process_vm_readv and would fail it with errno 1 \(EPERM\) for rt_sigprocmask, the two system calls by either of which the sampler checks a page of a stack readable"

# (d) without CAP_SYS_ADMIN: the worker thread alone is filtered (the
# main thread is not, so memprof may attach), and its filter cannot be read
CONF= start_target seccomp_profile thread-default
check "thread-default: one thread runs under a filter" [ "$(filtered_threads "$PID")" = 1 ]
mp_nocap() {
    OUT=$(capsh --drop=cap_sys_admin -- -c "exec '$MEMPROF' -p $PID -e 'prof on'" 2>"$WORK/mp.stderr"); RC=$?
    ERR=$(cat "$WORK/mp.stderr")
    printf '$ capsh --drop=cap_sys_admin -- memprof -p %s -e "prof on"\n%s\n%s\n(exit %d)\n' \
        "$PID" "$OUT" "$ERR" "$RC" >&2
}
mp_nocap
check "no CAP_SYS_ADMIN: prof on fails" mp_failed
check "no CAP_SYS_ADMIN: the filter cannot be read, and why" \
    err_has "process $PID runs under a seccomp filter \(thread [0-9]+\) memprof cannot read: the kernel gives a filter \(PTRACE_SECCOMP_GET_FILTER\) only to a tracer with CAP_SYS_ADMIN.*memprof lacks CAP_SYS_ADMIN"
check "no CAP_SYS_ADMIN: what it means is said" err_has "cannot tell what the filter does to the system calls the sampler makes"
check "no CAP_SYS_ADMIN: nothing mapped" file_lacks "/proc/$PID/maps" memprof-sampler
check "no CAP_SYS_ADMIN: the process lives on, untraced" untouched "$PID"

# (e) as root: the worker's own filters are read from the worker
mp -p "$PID" -e 'prof on' -e 'prof off'
check "thread-default, as root: prof on went in and came out" out_has 'profiling is now off'
check "thread-default, as root: the process lives on, untraced" untouched "$PID"
CONF= start_target seccomp_profile thread-kill-ppoll
check "thread-kill-ppoll: one thread runs under a filter" [ "$(filtered_threads "$PID")" = 1 ]
refused "thread-kill-ppoll" "process $PID's seccomp filter would kill the process \(SIGSYS\) for ppoll"
