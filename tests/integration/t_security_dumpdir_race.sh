# Issue 13.1: the target's user must never steer root's memprof into
# changing a file.  The target runs as nobody with a TMPDIR that nobody
# owns; an attacker, also nobody, watches that TMPDIR with inotify and
# replaces every memprof directory that appears by a symbolic link to a
# root-owned file.  Root's memprof dumps again and again, through the
# memfd (the normal way) and through the private directory (forced with
# the test hook MEMPROF_TEST_NO_MEMFD=1); the root-owned file keeps its
# owner and mode after every session.
. "$SRCDIR/tests/integration/lib.sh"

SESSIONS=${SESSIONS:-100}    # per way of dumping

# Everything nobody runs or writes lives in a directory it can reach ($WORK
# is root's, mode 0700).
base=$(mktemp -d /var/tmp/memprof-race.XXXXXX)
trap 'rc=$?; rm -rf "$base"; (exit $rc); cleanup' EXIT
chmod 755 "$base"
cp "$TARGETS/plain" "$TARGETS/dumpdir_attacker" "$base/"
mkdir "$base/tmp"
chown nobody:nogroup "$base/tmp"
chmod 700 "$base/tmp"
AS_NOBODY=(setpriv --reuid=nobody --regid=nogroup --clear-groups)

victim="$WORK/victim"
echo "root's secret" >"$victim"
chown root:root "$victim"
chmod 600 "$victim"
victim_state() { stat -c '%u:%g %a' "$victim"; }
ORIGINAL=$(victim_state)

MALLOC_CONF=prof:true,prof_active:false TMPDIR="$base/tmp" "${AS_NOBODY[@]}" "$base/plain" \
    >"$WORK/target.out" 2>"$WORK/target.err" &
PID=$!
PIDS+=("$PID")
wait_until 20 "the target (as nobody) to start" grep -qs "^ready" "$WORK/target.out"
[ "$(stat -c %u "/proc/$PID")" = "$(id -u nobody)" ] || die "the target does not run as nobody"

"${AS_NOBODY[@]}" "$base/dumpdir_attacker" "$base/tmp" "$victim" >"$WORK/attacker.out" 2>"$WORK/attacker.err" &
ATTACKER=$!
PIDS+=("$ATTACKER")
wait_until 20 "the attacker to watch $base/tmp" grep -qs "^ready" "$WORK/attacker.out"
swaps() { grep -c '^swapped' "$WORK/attacker.out"; }

# attack LABEL [ENV...]: $SESSIONS root sessions that dump; counts the
# sessions after which the victim had changed (and restores it) in
# TOUCHED, the successful ones in DUMPED.
attack() {
    local label=$1 i; shift
    TOUCHED=0 DUMPED=0
    for i in $(seq "$SESSIONS"); do
        if env "$@" "$MEMPROF" -p "$PID" -e dump >>"$WORK/$label.out" 2>>"$WORK/$label.err"; then
            DUMPED=$((DUMPED + 1))
        fi
        if [ "$(victim_state)" != "$ORIGINAL" ]; then
            TOUCHED=$((TOUCHED + 1))
            chown root:root "$victim"
            chmod 600 "$victim"
        fi
    done
    echo "$label: $SESSIONS sessions, $DUMPED dumped, the victim changed after $TOUCHED" \
         "(attacker swaps so far: $(swaps))"
}

attack memfd
check "memfd: the root-owned file was never changed" [ "$TOUCHED" -eq 0 ]
check "memfd: every session dumped" [ "$DUMPED" -eq "$SESSIONS" ]
check "memfd: no directory appeared for the attacker to swap" [ "$(swaps)" -eq 0 ]

attack dir MEMPROF_TEST_NO_MEMFD=1
check "directory: the root-owned file was never changed" [ "$TOUCHED" -eq 0 ]
# The attack really ran: otherwise this test would prove nothing.
check "directory: the attacker swapped memprof's directories" [ "$(swaps)" -gt 0 ]
# A swap before memprof's checks is named as such; one after them only
# makes the target's own dump fail.
REFUSALS=$(grep -cE 'was replaced: someone who can write to .* is interfering; memprof changed nothing|prof.dump: the process could not create or write the dump file' "$WORK/dir.err")
check "directory: every failed session says why" [ "$REFUSALS" -eq $((SESSIONS - DUMPED)) ]

check "the victim's contents are intact" grep -qx "root's secret" "$victim"
assert_untouched "$PID"
alive "$ATTACKER" || die "the attacker died: $(cat "$WORK/attacker.err")"
echo "dumpdir race ok"
