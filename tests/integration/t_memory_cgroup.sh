# A process's cgroup memory, read from the host (issue 33 item 4, issue
# 36 item 5): targets placed in a real cgroup of this host with a 128 MiB
# limit, in whichever hierarchy has the memory controller (v1 on a hybrid
# or legacy host, else v2; on a hybrid host the targets also get a v2
# cgroup of their own, for memory.pressure).  known_heap holds 100 MiB:
# 'memory', 'memory --json' and serve's /metrics give its usage, the
# limit, the headroom (limit - usage) and its RSS against the limit.  A
# process in its own cgroup namespace (unshare --cgroup) still has its
# limit read from the host.  A child of the cgroup that allocates past
# the limit is OOM-killed; the kill is then counted for the processes
# still in the cgroup (memory.events oom_kill, v1 memory.oom_control) and
# in the host's /proc/vmstat oom_kill.
. "$SRCDIR/tests/integration/lib.sh"

MIB=1048576
LIMIT=$((128 * MIB))
ge() { [ "$1" -ge "$2" ]; }

# The mount point of a hierarchy in our mountinfo: cgroup2, or the cgroup
# v1 one with the memory controller (fields after " - ": type, source,
# options).
mount_of() {
    awk -v want="$1" '{
        for (i = 7; $i != "-"; i++) ;
        if (want == "cgroup2" && $(i + 1) == "cgroup2") { print $5; exit }
        if (want == "memory" && $(i + 1) == "cgroup" && $(i + 3) ~ /(^|,)memory(,|$)/) { print $5; exit }
    }' /proc/self/mountinfo
}
V1=$(mount_of memory)
V2=$(mount_of cgroup2)
NAME=memprof-t-$$
CGDIRS=()
if [ -n "$V1" ]; then
    own=$(awk -F: '$2 ~ /(^|,)memory(,|$)/ { print $3 }' /proc/self/cgroup)
    own=${own%/}
    CGPATH=$own/$NAME
    MEMDIR=$V1$CGPATH
    mkdir "$MEMDIR" || die "cannot create the cgroup $MEMDIR"
    CGDIRS+=("$MEMDIR")
    echo "$LIMIT" >"$MEMDIR/memory.limit_in_bytes" || die "cannot set $MEMDIR's limit"
    VERSION=1
    if [ -n "$V2" ]; then        # hybrid: a v2 cgroup too, for memory.pressure
        PRESSURE_PATH=/$NAME
        mkdir "$V2/$NAME" || die "cannot create the cgroup $V2/$NAME"
        CGDIRS+=("$V2/$NAME")
    fi
else
    [ -n "$V2" ] || die "no cgroup file system is mounted"
    CGPATH=/$NAME
    MEMDIR=$V2$CGPATH
    grep -qw memory "$V2/cgroup.subtree_control" || echo +memory >"$V2/cgroup.subtree_control"
    mkdir "$MEMDIR" || die "cannot create the cgroup $MEMDIR"
    CGDIRS+=("$MEMDIR")
    echo "$LIMIT" >"$MEMDIR/memory.max" || die "cannot set $MEMDIR's memory.max"
    VERSION=2
    PRESSURE_PATH=$CGPATH
fi
echo "memory cgroup v$VERSION: $MEMDIR" >&2

# Last out: every process left in the cgroups is killed, then they go.
cgroups_removed() {
    local d p
    for d in "${CGDIRS[@]}"; do
        for p in $(cat "$d/cgroup.procs" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
    done
    for d in "${CGDIRS[@]}"; do
        for _ in $(seq 200); do rmdir "$d" 2>/dev/null && break; sleep 0.05; done
    done
}
CLEANUP_HOOKS+=(cgroups_removed)

# Copies of the targets, and a wrapper that enters the cgroups before it
# runs one (so that everything it touches is charged there).
mkdir "$WORK/bin" "$WORK/incg"
cp "$TARGETS/known_heap" "$TARGETS/plain" "$WORK/bin/"
enter="$WORK/enter-cgroups"
{
    echo '#!/bin/sh'
    for d in "${CGDIRS[@]}"; do echo "echo \$\$ >'$d/cgroup.procs' || exit 1"; done
    echo 'exec "$@"'
} >"$enter"
chmod +x "$enter"
printf '#!/bin/sh\nexec %s %s\n' "$enter" "$WORK/bin/known_heap" >"$WORK/incg/known_heap"
printf '#!/bin/sh\nexec %s unshare --cgroup %s\n' "$enter" "$WORK/bin/plain" >"$WORK/incg/plain"
chmod +x "$WORK/incg/"*
REAL_TARGETS=$TARGETS TARGETS=$WORK/incg

start_target known_heap
KH=$PID
start_target plain
PL=$PID
in_cgroup() { grep -qx "$1" "$MEMDIR/cgroup.procs"; }
check "known_heap runs in the cgroup" in_cgroup "$KH"
check "plain runs in the cgroup" in_cgroup "$PL"
check "plain is in a cgroup namespace of its own" \
    [ "$(readlink "/proc/$PL/ns/cgroup")" != "$(readlink /proc/self/ns/cgroup)" ]

# --- a process near its limit ---------------------------------------------
mp -p "$KH" -e 'memory --json'
check "memory --json runs" [ "$RC" -eq 0 ]
check "cgroup: version and path as this host has them" \
    [ "$(jf 'd["cgroup"]["version"] == '"$VERSION"' and d["cgroup"]["path"] == "'"$CGPATH"'"')" = True ]
check "cgroup.memory_max is the limit set" [ "$(jf 'd["cgroup"]["memory_max"]')" = "$LIMIT" ]
check "usage holds known_heap's 100 MiB" ge "$(jf 'd["cgroup"]["memory_current"]')" $((100 * MIB))
check "headroom is the limit less the usage" \
    [ "$(jf 'd["cgroup"]["headroom"] == d["cgroup"]["memory_max"] - d["cgroup"]["memory_current"]')" = True ]
check "headroom under 28 MiB" [ "$(jf 'd["cgroup"]["headroom"]')" -lt $((28 * MIB)) ]
check "anonymous memory charged to the cgroup >= 100 MiB" ge "$(jf 'd["cgroup"]["anon"]')" $((100 * MIB))
check "memory.pressure of the process's v2 cgroup" \
    [ "$(jf 'd["cgroup"]["pressure"]["path"] == "'"$PRESSURE_PATH"'" and "avg10" in d["cgroup"]["pressure"]["some"]')" = True ]
check "no OOM kill yet" [ "$(jf 'd["cgroup"]["oom_kill"]')" = 0 ]
HOST_KILLS=$(jf 'd["host_oom_kills"]')
check "the host's OOM kills are counted" [ -n "$HOST_KILLS" ]

# the diagnosis (issue 36 items 2 and 5): the cgroup near its limit comes
# first, its bytes the usage this test reads from the cgroup itself
usage_file=$MEMDIR/memory.current
[ "$VERSION" = 1 ] && usage_file=$MEMDIR/memory.usage_in_bytes
USAGE=$(cat "$usage_file")
check "diagnoses: the cgroup near its limit first" [ "$(jf 'd["diagnoses"][0]["key"]')" = cgroup_near_limit ]
check "diagnoses: its bytes within 10 % of the cgroup's usage" \
    [ "$(jf 'abs(d["diagnoses"][0]["bytes"] - '"$USAGE"') * 10 <= '"$USAGE")" = True ]
check "diagnoses: the remedy says to raise memory.max" \
    [ "$(jf '"raise the limit (memory.max" in d["diagnoses"][0]["remedy"] and "128.0 MiB" in d["diagnoses"][0]["remedy"]')" = True ]
check "diagnoses: sorted by bytes" \
    [ "$(jf 'all(a["bytes"] >= b["bytes"] for a, b in zip(d["diagnoses"], d["diagnoses"][1:]))')" = True ]

mp -p "$KH" -e memory
check "memory: the cgroup diagnosis first" \
    first_diagnosis_has "^ +1[0-2][0-9]\\.[0-9] MiB  the cgroup $CGPATH is near its memory limit"
check "memory: usage of the limit 128.0 MiB, with the headroom" \
    out_has '^  usage +1[0-2][0-9]\.[0-9] MiB  of the limit 128\.0 MiB \([0-9.]+ %\): headroom [0-9]+\.[0-9] MiB'
check "memory: the process's RSS as a share of the limit" \
    out_has "^  this process's RSS +1[0-2][0-9]\\.[0-9] MiB  = (7[89]|[89][0-9])\\.[0-9] % of the limit"
check "memory: the cgroup's path" out_has "^cgroup +$CGPATH \\(v$VERSION, under "
check "memory: the events" out_has '^  events .*oom_kill 0'

# --- another cgroup namespace ----------------------------------------------
mp -p "$PL" -e 'memory --json'
check "in its own cgroup namespace: the host's path of its cgroup" \
    [ "$(jf 'd["cgroup"]["path"]')" = "$CGPATH" ]
check "in its own cgroup namespace: its limit is read" [ "$(jf 'd["cgroup"]["memory_max"]')" = "$LIMIT" ]
mp -p "$PL" -e memory
check "no 'another cgroup namespace' refusal" out_lacks 'another cgroup namespace'

# --- /metrics ---------------------------------------------------------------
start_serve --target "exe=$WORK/bin/known_heap" --target "exe=$WORK/bin/plain"
metric() {   # metric NAME PID: its value for that pid in $WORK/body
    awk -v n="$1" -v pid="$2" 'index($1, n "{pid=\"" pid "\"") == 1 { print $2; exit }' "$WORK/body"
}
http GET "/metrics?pid=$KH"
check "/metrics: 200" status_is 200
check "/metrics: the limit" [ "$(metric memprof_cgroup_memory_limit_bytes "$KH")" = "$LIMIT" ]
check "/metrics: the usage >= 100 MiB" ge "$(metric memprof_cgroup_memory_usage_bytes "$KH")" $((100 * MIB))
check "/metrics: the headroom under 28 MiB" [ "$(metric memprof_cgroup_memory_headroom_bytes "$KH")" -lt $((28 * MIB)) ]
check "/metrics: memory pressure over 10 s" body_has "^memprof_cgroup_memory_pressure_some_ratio\\{pid=\"$KH\".*,window=\"10\"\\} [0-9.]+$"
check "/metrics: OOM kills, a counter" body_has '^# TYPE memprof_cgroup_oom_kills_total counter$'
check "/metrics: the host's OOM kills, without a process's labels" body_has '^memprof_host_oom_kills_total [0-9]+$'
check "/metrics: the cgroup diagnosis by cause" \
    body_has "^memprof_process_memory_diagnosis_bytes\\{pid=\"$KH\".*,cause=\"cgroup_near_limit\"\\} [0-9]+$"
http GET "/metrics?pid=$PL"
check "/metrics: the limit of a process in its own cgroup namespace" \
    [ "$(metric memprof_cgroup_memory_limit_bytes "$PL")" = "$LIMIT" ]

# --- an OOM kill in the cgroup ----------------------------------------------
# The child that grows makes itself the OOM killer's first choice
# (oom_score_adj 1000: raising it needs no privilege), so that the targets
# stay.
"$enter" sh -c 'echo 1000 >/proc/self/oom_score_adj && exec python3 -c "b = b\"x\" * (400 << 20)"' \
    >"$WORK/hog.out" 2>&1
HOG_RC=$?
check "the child past the limit was killed (SIGKILL)" [ "$HOG_RC" -eq 137 ]
mp -p "$KH" -e 'memory --json'
check "memory --json: the cgroup's oom_kill counts it" [ "$(jf 'd["cgroup"]["oom_kill"]')" -ge 1 ]
check "memory --json: the host's OOM kills grew" [ "$(jf 'd["host_oom_kills"]')" -gt "$HOST_KILLS" ]
if [ "$VERSION" = 2 ]; then
    check "memory --json: v2 counts the OOM too" [ "$(jf 'd["cgroup"]["oom"]')" -ge 1 ]
else
    check "memory --json: v1 counts the limit hits (failcnt)" [ "$(jf 'd["cgroup"]["max_events"]')" -ge 1 ]
fi
mp -p "$KH" -e memory
check "memory: oom_kill 1" out_has '^  events .*oom_kill 1'
check "memory: the cgroup diagnosis says the OOM kill" out_has '^ +[0-9.]+ MiB  the cgroup .*oom_kill 1'
http GET "/metrics?pid=$KH"
check "/metrics: memprof_cgroup_oom_kills_total 1" [ "$(metric memprof_cgroup_oom_kills_total "$KH")" = 1 ]

check "known_heap untouched" untouched "$KH"
check "plain untouched" untouched "$PL"
