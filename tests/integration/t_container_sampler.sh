# memprof's heap sampler in a glibc malloc process in a real podman
# container started with podman's DEFAULT seccomp profile (which returns
# EPERM by default and allows every call the sampler makes), driven from
# the host with the host PID: `info` judges the filter first and says the
# sampler can go in; `prof on` goes in, the process allocates a
# known heap (glibc_live: one round of keep_* functions), `dump` and
# `top` name its allocating function keep_malloc with the bytes it kept
# (rate 0: every allocation), `prof off` takes the sampler out; the
# process runs on, untraced, and answers the next round (containers.sh's
# sampler_checks; t_container_docker.sh runs them under Docker).
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/integration/containers.sh"

glibc_live_start bookworm
check "the container has podman's default seccomp filter" \
    grep -Eq '^Seccomp:[[:space:]]+2$' "/proc/$CPID/status"

# before prof on, info judges the filter as prof on will
mp -p "$CPID" -e 'info --json'
check "info --json before prof on: the sampler possible under the default profile" \
    [ "$(jf '(d["allocator"]["sampler"]["possible"], d["allocator"]["sampler"]["seccomp_filters"] > 0)')" = "(True, True)" ]
sampler_checks podman
