# memprof's heap sampler and a process's limits on new memory:
#  - a process that forbids itself writable-and-executable memory
#    (PR_SET_MDWE, REFUSE_EXEC_GAIN): the sampler goes in all the same,
#    its code mapped read+execute and its data read+write (anonymous),
#    never a page both; a dump works and the session's end takes it out;
#  - a process whose address-space limit (RLIMIT_AS, set with prlimit)
#    leaves no room for the sampler's region: 'prof on' fails, says the
#    process refused the mapping and why that can be, and leaves nothing
#    mapped and the process running.
. "$SRCDIR/tests/integration/lib.sh"

CONF= start_target mdwe_heap
check "mdwe: the kernel took PR_SET_MDWE" file_has "$TARGET_OUT" 'mdwe=1 rwx=refused'
mp -p "$PID" -e 'prof on' -e dump
check "mdwe: the sampler went in" out_has 'profiling is now on'
check "mdwe: the dump worked" out_has '^dump1: [0-9]+ stacks'
# the gate stays mapped, inert, for the next session
check "mdwe: the gate's code is read+execute" grep -Eq ' r-xp .*memprof-sampler' "/proc/$PID/maps"
check "mdwe: the gate's data page is read+write (and holds its mark)" owner_page_ok "$PID"
check "mdwe: no page of the process is writable and executable" \
    bash -c '! grep -Eq "^[^ ]+ .wx" "/proc/$1/maps"' _ "$PID"
check "mdwe: the session's end took it out" \
    err_has "memprof took its sampler out of process $PID: [0-9]+ call-table slots put back"
check "mdwe: the process is left running, untraced" untouched "$PID"

CONF= start_target session_idle
vm=$(awk '/^VmSize:/ {print $2 * 1024}' "/proc/$PID/status")
prlimit --pid "$PID" --as="$vm"
check "no room: the limit is set" \
    grep -Eq "^Max address space +$vm " "/proc/$PID/limits"
mp -p "$PID" -e 'prof on'
check "no room: prof on fails" mp_failed
check "no room: says the process refused the mapping, and why it can" \
    err_has "process $PID refused to map the sampler's code executable \(a security policy: SELinux execmem, PR_SET_MDWE, or its memory limit\)"
check "no room: nothing mapped" file_lacks "/proc/$PID/maps" memprof-sampler
check "no room: no sampler memfd left in the process" \
    bash -c '! ls -l /proc/$1/fd | grep -q "memfd:memprof"' _ "$PID"
check "no room: the process is left running, untraced" untouched "$PID"
