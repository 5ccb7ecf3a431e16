# jemalloc processes in real podman containers (podman's default seccomp
# profile and capabilities), driven from the host with their host PIDs:
#  - bookworm: a test program that exists only in the container (copied
#    into its own layer) started with profiling available: `info` names
#    the executable by the container's path and jemalloc in the
#    container's library; `prof on`, the program grows by 64 MiB on
#    request, `dump` and `top` name its own function (main) with those
#    64 MiB; `prof off`.  Debian's redis from the container: `prof on`,
#    a populate, `top` names redis's zmalloc.
#  - bullseye (glibc 2.31, jemalloc 5.2.1: files that differ from the
#    host's): redis with profiling active from its start (jemalloc 5.2's
#    `prof on` is another helper's fix): `info` (jemalloc 5.2.1, the
#    container's redis-check-rdb, whose build-id is not the host's),
#    `stats`, `memory`, a dump named from the container's files (zmalloc),
#    `purge`.
# Every target answers and is left running, untraced, after each step.
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/integration/containers.sh"
# Sampling every 64 KiB on average from the start (a rate set later
# applies only after each thread's next sample): each 1 MiB block the
# program grows by is sampled but with a chance of e^-16, so the 64 MiB
# are counted whole.
EXACT=prof:true,prof_active:false,lg_prof_sample:16

build_id() { readelf -n "$1" 2>/dev/null | awk '/Build ID/ {print $3}'; }

# --- bookworm: a container-only program --------------------------------------
PROG=/usr/local/bin/memprof-grow-in-container
[ ! -e "$PROG" ] || die "$PROG exists on the host: the test needs a path only the container has"
FILES="$TARGETS/grow_on_signal:$PROG" container_start bookworm \
    -e MALLOC_CONF=$EXACT -- sh -c "exec $PROG >/tmp/target.out 2>&1"
OUTF=$(in_container /tmp/target.out)
wait_until 20 "the program in $CNAME to print ready" file_has "$OUTF" '^ready'
check "bookworm: the program runs in its own PID namespace" [ "$(ns_pid "$CPID")" != "$CPID" ]

mp -p "$CPID" -e info
check "bookworm info: attached" mp_ok
check "bookworm info: the container's path of the executable" out_has "^executable +$PROG\$"
check "bookworm info: jemalloc found in the container's library" \
    out_has '^  found in +/usr/lib/x86_64-linux-gnu/libjemalloc\.so\.2 \(shared object\)'
check "bookworm info: untouched" untouched "$CPID"

session_open grow
session_send 'prof on' 'profiling is now on'
kill -USR1 "$CPID"
wait_until 20 "the program to grow" file_has "$OUTF" '^grown 64'
session_send dump '^dump1: [0-9]+ stacks'
session_send 'top --json 10' '^}'
session_send 'prof off' 'profiling is now off'
close_session
check "bookworm prof on/dump/top/off: the session ended well" [ "$MPRC" = 0 ]
check "bookworm prof on/dump/top/off: untouched" untouched "$CPID"
OUT=$(session_out)
got=$(flat_bytes_of main)
check "bookworm top: main, the program's own function, holds the 64 MiB it grew ($got)" \
    [ "${got:-0}" -ge $((64 * 1024 * 1024)) ]
check "bookworm top: untouched" untouched "$CPID"
kill -USR1 "$CPID"
check "bookworm: the program still answers" within 20 file_has "$OUTF" '^grown 128'

# --- bookworm: Debian's redis from the container -----------------------------
container_start bookworm -e MALLOC_CONF=prof:true,prof_active:false -- "${REDIS_IN_CONTAINER[@]}"
wait_until 20 "redis in $CNAME to answer PING" redis_ping
session_open redis
session_send 'prof sample 15' 'sampling every 2\^15'
session_send 'prof on' 'profiling is now on'
redis_fill 100000
session_send dump '^dump1: [0-9]+ stacks'
session_send 'top --json 10' '^}'
session_send 'prof off' 'profiling is now off'
close_session
check "bookworm redis prof on/dump/top/off: the session ended well" [ "$MPRC" = 0 ]
OUT=$(session_out)
check "bookworm redis top: zmalloc, redis's own, holds the keys populated" \
    [ "$(flat_bytes_of zmalloc)" -ge $((1024 * 1024)) ]
check "bookworm redis: answers PING" redis_ping
check "bookworm redis: untouched" untouched "$CPID"

# --- bullseye: redis with jemalloc 5.2.1 and glibc 2.31 ----------------------
container_start bullseye -e MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:10 -- \
    "${REDIS_IN_CONTAINER[@]}"
wait_until 20 "redis in $CNAME to answer PING" redis_ping
redis_fill 20000
theirs=$(build_id "$(in_container /usr/bin/redis-check-rdb)")
check "bullseye: the container's redis is not the host's build" \
    [ -n "$theirs" ] && [ "$theirs" != "$(build_id /usr/bin/redis-check-rdb)" ]

mp -p "$CPID" -e info -e stats -e memory
check "bullseye info/stats/memory: attached and answered" mp_ok
check "bullseye info: the executable, as the container has it" out_has '^executable +/usr/bin/redis-check-rdb$'
check "bullseye info: jemalloc 5.2.1" out_has '^jemalloc +5\.2\.1-'
check "bullseye stats: jemalloc's figures" out_has '^allocated +[0-9.]+ MiB'
check "bullseye memory: read" out_has 'resident|RSS'
check "bullseye info/stats/memory: untouched" untouched "$CPID"

mp -p "$CPID" -e dump -e 'top --json 10'
check "bullseye dump/top: read" mp_ok
check "bullseye top: zmalloc named from the container's redis" \
    [ "$(flat_bytes_of zmalloc)" -ge $((1024 * 1024)) ]
check "bullseye dump/top: untouched" untouched "$CPID"

redis_cmd flushall >/dev/null
mp -p "$CPID" -e purge
check "bullseye purge: done" mp_ok
check "bullseye purge: redis answers PING" redis_ping
check "bullseye purge: untouched" untouched "$CPID"
