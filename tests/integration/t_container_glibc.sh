# glibc malloc processes in real podman containers (default seccomp
# profile and capabilities), driven from the host with their host PIDs:
# Debian's nginx in a bookworm and in a bullseye container (glibc 2.31:
# the container's libc is not the host's), master and a worker (another
# user): `info` names glibc malloc in the container's own libc, `stats`
# reads malloc_info, `purge` runs malloc_trim, `memory` shows glibc's
# heap; nginx keeps listening, each process left running, untraced.  And
# in bookworm, a program that freed 400 MiB glibc cannot give back by
# itself (glibc_fragmented, copied into the container): `purge` returns
# most of it, as on the host.
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/integration/containers.sh"

# nginx's master and worker are up and it listens on port 80 in the
# container's network namespace (state 0A: LISTEN in /proc/PID/net/tcp).
nginx_ready() {
    alive "$CPID" || die "nginx in $CNAME exited: $(podman logs "$CNAME" 2>&1 | tail -3)"
    [ -n "$(pgrep -P "$CPID")" ] && awk '$2 ~ /:0050$/ && $4 == "0A" {f = 1} END {exit !f}' "/proc/$CPID/net/tcp"
}

# glibc_checks SUITE LIBC: memprof's glibc commands on nginx's master and
# worker in a SUITE container whose libc is LIBC (as the container names it).
glibc_checks() {
    local suite=$1 libc=$2 pid who
    container_start "$suite" -- nginx -g 'daemon off;'
    wait_until 20 "nginx in $CNAME to listen" nginx_ready
    for who in master worker; do
        pid=$CPID
        [ "$who" = worker ] && pid=$(pgrep -P "$CPID" | head -1)
        mp -p "$pid" -e info -e stats -e memory
        check "$suite nginx $who: info, stats, memory answered" mp_ok
        check "$suite nginx $who info: glibc malloc in the container's $libc" \
            out_has "^allocator +glibc malloc in /usr/lib/x86_64-linux-gnu/${libc//./\\.}"
        check "$suite nginx $who info: the container's nginx" out_has '^executable +/usr/sbin/nginx$'
        check "$suite nginx $who stats: malloc_info read" out_has '^free, held +[0-9.]+ MiB'
        check "$suite nginx $who memory: glibc's heap" out_has '^allocator heap +[0-9.]+ MiB +\(glibc malloc'
        mp -p "$pid" -e purge
        check "$suite nginx $who purge: ran" out_has '^RSS +[0-9.]+ MiB +[0-9.]+ MiB +[0-9.]+ MiB'
        check "$suite nginx $who: untouched" untouched "$pid"
    done
    check "$suite nginx: still listening" nginx_ready
}
glibc_checks bookworm libc.so.6
glibc_checks bullseye libc-2.31.so

# A heap glibc cannot give back by itself, in a bookworm container.
MIB=$((1024 * 1024))
FILES="$TARGETS/glibc_fragmented:/usr/local/bin/memprof-fragmented" container_start bookworm -- \
    sh -c 'exec /usr/local/bin/memprof-fragmented threads 2 >/tmp/target.out 2>&1'
OUTF=$(in_container /tmp/target.out)
wait_until 30 "the fragmented program in $CNAME to print ready" file_has "$OUTF" '^ready'
freed=$(awk '{for (i = 1; i < NF; i++) if ($i == "freed") s += $(i + 1)} END {print s}' "$OUTF")
[ "${freed:-0}" -ge $((300 * MIB)) ] || die "the target freed only ${freed:-0} bytes"
rss() { awk '/^VmRSS/ {print $2 * 1024}' "/proc/$CPID/status"; }
before=$(rss)
mp -p "$CPID" -e purge
check "fragmented purge: malloc_trim released memory" out_has '^malloc_trim\(0\): memory was returned'
after=$(rss)
check "fragmented purge: most of the freed memory left the process (VmRSS $before -> $after)" \
    [ $((before - after)) -ge $((freed * 8 / 10)) ]
check "fragmented purge: untouched" untouched "$CPID"
