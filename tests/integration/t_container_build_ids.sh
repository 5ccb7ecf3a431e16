#!/usr/bin/env bash
# A dump of a process in a container is never named from the host's file
# of another build at the same path (issue 33, item 2).  One build of
# two_builds runs in its own mount namespace where path P is that build
# (a bind mount, as a container's root file system would hold it); on the
# host, P is the other build, whose functions (other_build_*) lie where
# the first one's allocation sites are.  Offline on the host, the dump
# shows P's frames as prog+0xOFF with a warning naming the build-id and
# how to get it; the same dump is named right when that build is found by
# build-id: in a debug directory (--debug-dir), through a real debuginfod
# server (the object itself), and in the run directory 'profile save'
# wrote while the process ran, which keeps the objects (DIR/.build-id).
# A dump without its build-ids is named from P as before, and says so.
. "$SRCDIR/tests/integration/lib.sh"

# No line of the output names a function of the other build.
no_other_build() { ! grep -q 'other_build_' <<<"$OUT"; }
names_sites() { grep -Eq '%  build_site_big$' <<<"$OUT" && grep -Eq '%  build_site_small$' <<<"$OUT"; }

# Outside the test's TMPDIR (as t_container_dump.sh: /var/tmp).
bindir=$(mktemp -d /var/tmp/memprof-builds.XXXXXX)
trap 'rc=$?; rm -rf "$bindir"; (exit $rc); cleanup' EXIT
P=$bindir/prog
cp "$TARGETS/two_builds_b" "$P"
cp "$TARGETS/two_builds" "$bindir/prog_a"
A_ID=$(build_id "$bindir/prog_a")
B_ID=$(build_id "$P")
[ -n "$A_ID" ] && [ "$A_ID" != "$B_ID" ] || die "the two builds have no distinct build-ids"

# Build A in a mount namespace of its own where P is build A; sets PID.
start_a() {
    env MALLOC_CONF=prof:true,prof_active:false unshare --mount --propagation private --fork \
        sh -c "mount --bind \"$bindir/prog_a\" \"$P\" && exec \"$P\"" \
        >"$WORK/a.out" 2>"$WORK/a.err" &
    local ns=$!
    PIDS+=("$ns")
    wait_until 20 "build A ready in its namespace: $(cat "$WORK/a.err")" grep -q '^ready' "$WORK/a.out"
    PID=$(pgrep -P "$ns")
    [ -n "$PID" ] || die "no target under unshare $ns"
    PIDS+=("$PID")
    [ "$(build_id "/proc/$PID/root$P")" = "$A_ID" ] || die "the target does not run build A"
}
start_a

mp -q -p "$PID" -e 'prof sample 12 --force' -e 'prof on' -e 'sleep 1' -e "dump $WORK/d.heap" \
    -e 'top 5' -e "profile save $WORK/run" -e 'prof off' -e 'prof sample 19'
check "live: the session ran" mp_ok
check "live: top names build A's sites (read in the process's root)" names_sites
check "live: nothing named from the host's build" no_other_build
check "the dump recorded build A's build-id for P" grep -q "^$A_ID $P\$" "$WORK/d.heap.buildids"
check "profile save kept build A by its build-id" \
    [ "$(build_id "$WORK/run/.build-id/${A_ID:0:2}/${A_ID:2}")" = "$A_ID" ]
check "profile save said what it kept" out_has "^kept [0-9]+ object files? \([0-9.]+ MiB\) in $WORK/run/.build-id"
check "the kept copy is a private regular file" \
    [ "$(stat -c '%F %a' "$WORK/run/.build-id/${A_ID:0:2}/${A_ID:2}")" = "regular file 600" ]
kill -9 "$PID"
wait_until 10 "build A gone" bash -c "! kill -0 $PID 2>/dev/null"

# ---- offline on the host, where P is build B ----
mp "$WORK/d.heap" -e 'top 5'
check "offline: top runs" mp_ok
check "offline: no frame named from build B" no_other_build
check "offline: P's frames are prog+0xOFF" out_has '%  prog\+0x[0-9a-f]+$'
check "offline: the warning names both build-ids" \
    err_has "cannot symbolize $P: the process had build-id $A_ID mapped, but the file there has build-id $B_ID"
check "offline: the warning says how to get that build" \
    err_has "install its debug package .*/usr/lib/debug/.build-id/${A_ID:0:2}/${A_ID:2}.debug.*DEBUGINFOD_URLS.*'profile save'"
mp "$WORK/d.heap" -e "pprof $WORK/d.pb.gz"
check "offline pprof: nothing named from build B" \
    holds eval 'python3 "$SRCDIR/tests/integration/pprof_json.py" "$SRCDIR" "$WORK/d.pb.gz" >"$WORK/d.json" && grep -q "prog+0x" "$WORK/d.json" && ! grep -q other_build_ "$WORK/d.json"'

# ---- found by build-id in a debug directory ----
mkdir -p "$WORK/debug/.build-id/${A_ID:0:2}"
objcopy --only-keep-debug "$bindir/prog_a" "$WORK/debug/.build-id/${A_ID:0:2}/${A_ID:2}.debug"
mp "$WORK/d.heap" --debug-dir "$WORK/debug" -e 'top 5'
check "debug directory: names build A's sites from its debug file" names_sites
check "debug directory: nothing named from build B" no_other_build
check "debug directory: says where the names come from" \
    err_has "its frames are named from $WORK/debug/.build-id/${A_ID:0:2}/${A_ID:2}.debug"

# ---- found through debuginfod (the object itself) ----
mkdir -p "$WORK/srv"
cp "$bindir/prog_a" "$WORK/srv/prog_a"
PORT=$(free_port)
debuginfod -F -p "$PORT" -d "$WORK/debuginfod.sqlite" -t 0 -g 0 "$WORK/srv" \
    >"$WORK/debuginfod.log" 2>&1 &
SERVER=$!
PIDS+=("$SERVER")
wait_until 60 "debuginfod serving build A" debuginfod_serves "$PORT" "$A_ID" executable
DEBUGINFOD_URLS="http://127.0.0.1:$PORT" DEBUGINFOD_CACHE_PATH=$WORK/cache \
    mp "$WORK/d.heap" -e 'top 5'
check "debuginfod: names build A's sites" names_sites
check "debuginfod: nothing named from build B" no_other_build
check "debuginfod: the object came into the cache" test -s "$WORK/cache/$A_ID/executable"
kill "$SERVER"
wait "$SERVER" 2>/dev/null

# ---- the run directory saved while it ran ----
mp "$WORK/run" -e 'top 5'
check "run directory: top runs" mp_ok
check "run directory: names build A's sites from the kept copy" names_sites
check "run directory: nothing named from build B" no_other_build
check "run directory: no warning (its own copies are what it is for)" \
    holds eval '! grep -q warning <<<"$ERR"'
# Moved elsewhere (another machine's directory): still its own copies.
mv "$WORK/run" "$WORK/moved"
mp "$WORK/moved" -e 'top 5'
check "run directory moved: still names build A's sites" names_sites
# A kept file of another build under A's name is not believed.
cp "$P" "$WORK/moved/.build-id/${A_ID:0:2}/${A_ID:2}"
mp "$WORK/moved" -e 'top 5'
check "a kept copy of another build is not used" no_other_build
check "a kept copy of another build: P's frames are prog+0xOFF" out_has '%  prog\+0x[0-9a-f]+$'

# ---- a run saved after its process ended: what could not be kept is said ----
start_a
"$MEMPROF" -q -p "$PID" -e 'prof sample 12 --force' \
    -e "profile start --duration 5m --every 1s --save $WORK/ended" -e 'sleep 2.5' -e 'profile' \
    -e 'profile wait' >"$WORK/ended.out" 2>"$WORK/ended.err" &
MP=$!
wait_until 30 "two dumps before the process ends" file_has "$WORK/ended.out" ': ([2-9]|[1-9][0-9]+) taken'
kill -KILL "$PID"
wait_until 20 "memprof to finish its batch" sh -c "! kill -0 $MP 2>/dev/null"
wait "$MP"
check "ended: the run was saved" file_has "$WORK/ended.out" "^saved run1: "
check "ended: the save says build A of P was not kept, and why" \
    file_has "$WORK/ended.err" "^warning: profile save: [0-9]+ object files? not kept in $WORK/ended, first $P \(no file of $P's recorded build was found\)"
check "ended: nothing of build B was kept as build A" \
    [ ! -e "$WORK/ended/.build-id/${A_ID:0:2}/${A_ID:2}" ]
mp "$WORK/ended" -e 'top 5'
check "ended: read back, no frame named from build B" no_other_build
check "ended: read back, P's frames are prog+0xOFF" out_has '%  prog\+0x[0-9a-f]+$'

# ---- a dump without its build-ids: named from P, and said so ----
cp "$WORK/d.heap" "$WORK/bare.heap"
mp "$WORK/bare.heap" -e 'top 5'
check "no build-ids: the note says the names are unchecked" \
    err_has "^note: bare.heap comes without the build-ids .*named from the files at its paths now \($P, "
echo "container build-ids ok"
