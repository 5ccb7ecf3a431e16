# memprof's heap sampler in a glibc malloc process in a real podman
# container started with podman's DEFAULT seccomp profile (which returns
# EPERM by default and allows every call the sampler makes), driven from
# the host with the host PID: `info` judges the filter first and says the
# sampler can go in; `prof on` goes in, the process allocates a
# known heap (glibc_live: one round of keep_* functions), `dump` and
# `top` name its allocating function keep_malloc with the bytes it kept
# (rate 0: every allocation), `prof off` takes the sampler out; the
# process runs on, untraced, and answers the next round.
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/integration/containers.sh"

PROG=/usr/local/bin/memprof-glibc-live
FILES="$TARGETS/glibc_live:$PROG" container_start bookworm -- sh -c "exec $PROG >/tmp/target.out 2>&1"
OUTF=$(in_container /tmp/target.out)
wait_until 20 "glibc_live in $CNAME to print ready" file_has "$OUTF" '^ready'
check "the container has podman's default seccomp filter" \
    grep -Eq '^Seccomp:[[:space:]]+2$' "/proc/$CPID/status"
# round N: SIGUSR1, then wait for the round's "done" line.
round() {
    kill -USR1 "$CPID"
    wait_until 20 "round $1 to finish" file_has "$OUTF" "^round $1 done"
}

# before prof on, info judges the filter as prof on will
mp -p "$CPID" -e 'info --json'
check "info --json before prof on: the sampler possible under the default profile" \
    [ "$(jf '(d["allocator"]["sampler"]["possible"], d["allocator"]["sampler"]["seccomp_filters"] > 0)')" = "(True, True)" ]

session_open s
session_send 'prof sample 0' 'sampling every 2\^0 bytes'
session_send 'prof on' 'profiling is now on|memprof: '
check "prof on: the sampler went in" grep -q 'profiling is now on' "$WORK/s.out"
round 1
session_send dump '^dump1: [0-9]+ stacks|memprof: '
session_send 'top --json 30' '^}|memprof: '
session_send 'prof off' 'profiling is now off|memprof: '
close_session
check "the session ended well" [ "$MPRC" = 0 ]
OUT=$(session_out)
want=$(awk '$1 == "live" && $2 == "keep_malloc" {print $3; exit}' "$OUTF")
check "top: keep_malloc holds exactly what it kept ($want bytes)" [ "$(flat_bytes_of keep_malloc)" = "$want" ]
sr=$(sampler_smaps "$CPID")
check "prof off: no sampler body left mapped" [ "$(sampler_bodies "$CPID")" = 0 ]
check "prof off: only the gate stays, 8 KiB, at most 8 KiB resident (smaps: $sr)" \
    sampler_gate_only "$sr"
check "the process is left running, untraced" untouched "$CPID"
round 2
check "the process answers the next round" file_has "$OUTF" '^round 2 done'
