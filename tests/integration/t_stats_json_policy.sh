# stats --json under memory policies (issue 8): in a process that forbids
# itself writable-and-executable memory (MDWE) the capture still works,
# its region never being both; in a process whose address-space limit
# leaves no room for the buffer memprof says that the process refused the
# mapping, and the process is unharmed; a smaller --max-size then fits.
. "$SRCDIR/tests/integration/lib.sh"

err_has() { grep -Eq -- "$1" <<<"$ERR"; }
anon_code() { awk '$5 == 0 && $2 ~ /^r.x|^r--/ && NF == 5' "/proc/$PID/maps" | wc -l; }

start_target mdwe_heap
check "the kernel refuses this process RWX memory" grep -q '^ready mdwe=1 rwx=refused' "$TARGET_OUT"
before=$(anon_code)
mp -p "$PID" -e 'stats --json'
check "stats --json works under MDWE" [ "$RC" -eq 0 ]
check "and says what it captured" err_has "captured [0-9]+ bytes of jemalloc's statistics"
check "nothing left mapped" [ "$(anon_code)" -eq "$before" ]

# an address-space limit with 16 MiB to spare: the 64 MiB default buffer cannot be mapped
vm=$(awk '/^VmSize:/ {print $2 * 1024}' "/proc/$PID/status")
prlimit --pid "$PID" --as=$((vm + 16 * 1048576)) || die "prlimit failed"
mp -p "$PID" -e 'stats --json'
check "a mapping the process cannot make is refused" [ "$RC" -eq 1 ]
check "memprof says the process refused the mapping" \
    err_has "refused to map [0-9]+ bytes of executable memory for the write callback"
check "nothing left mapped after the refusal" [ "$(anon_code)" -eq "$before" ]
check "the process is fine" assert_untouched "$PID"
mp -p "$PID" -e 'stats --json --max-size 4M'
check "a smaller --max-size fits" [ "$RC" -eq 0 ]
check "nothing left mapped at the end" [ "$(anon_code)" -eq "$before" ]
