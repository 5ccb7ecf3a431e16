# memprof's heap sampler in PostgreSQL's postmaster, which forks a backend
# per connection (issue 35: what stays after 'prof off', what backends
# forked while it was in keep, and what memprof says about them).
#  - Before 'prof on' no mapping of memprof's; while on, the body
#    (megabytes) beside the gate; after 'prof off' only the gate: 8 KiB
#    mapped, at most 8 KiB resident (smaps), and a second on/off cycle
#    reuses it and leaves no more.
#  - Backends forked while the sampler was in: fork gave them the gate's
#    data page wiped and no body; after the postmaster's 'prof off' they
#    keep only the gate (8 KiB), their call tables point at its stand-ins,
#    which pass every call straight through, and they serve queries.  A
#    session on one says it inherited the stand-ins from the postmaster by
#    fork (not that a memprof died there), puts every slot back, and its
#    'info' says what the page is; the backend serves on.
#  - A backend forked before 'prof on' has nothing of memprof's; one forked
#    after 'prof off' has the gate alone and no slot pointing at it.
. "$SRCDIR/tests/integration/lib.sh"

start_postgres
PM=$PID
OLD=$(pg_backend_pid)
# send CMD RE: a command to the postmaster's session, then wait for one
# more line matching RE than before.
send() {
    local n
    n=$(grep -Ec -- "$2" "$WORK/pm.out" 2>/dev/null)
    echo "$1" >&3
    wait_until 30 "the session to answer '$1'" count_above "$WORK/pm.out" "$2" "${n:-0}"
}
# pg_open N: a psql session on FIFO $WORK/q$N.in, held open on fd 6+N;
# sets BK[N] to its backend's pid.
declare -A BK
pg_open() {
    mkfifo "$WORK/q$1.in"
    # not holding the session's input (fd 3) or another session's open
    psql -h "$PGSOCK" -p "$PG_PORT" -U postgres -X -At <"$WORK/q$1.in" >"$WORK/q$1.out" 2>&1 \
        3>&- 7>&- 8>&- 9>&- 10>&- &
    PIDS+=("$!")
    eval "exec $((6 + $1))>\"\$WORK/q\$1.in\""
    echo 'select pg_backend_pid();' >&$((6 + $1))
    wait_until 20 "psql session $1 to print its backend's pid" grep -Eq '^[0-9]+$' "$WORK/q$1.out"
    BK[$1]=$(grep -Em1 '^[0-9]+$' "$WORK/q$1.out")
}
# serves N: backend N answers a query that allocates (a sort of 20000 rows).
serves() {
    local want n
    want=$(( $1 * 1000 + 20000 ))
    n=$(grep -c "^$want\$" "$WORK/q$1.out")
    echo "select max(g) + $1 * 1000 from (select g from generate_series(1, 20000) g order by md5(g::text)) s;" >&$((6 + $1))
    within 20 count_above "$WORK/q$1.out" "^$want\$" "$n"
}
sr() { sampler_smaps "$1"; }

check "before 'prof on': no mapping of memprof's in the postmaster (smaps)" [ "$(sr "$PM")" = "0 0" ]

open_session pm
send 'prof on' 'profiling is now on'
on_sr=$(sr "$PM")
echo "while on: memprof's mappings in the postmaster (Size, Rss KiB): $on_sr"
check "on: the postmaster maps the body beside the gate" \
    [ "$(sampler_regions "$PM") $(sampler_bodies "$PM")" = "1 1" ]
check "on: the postmaster's call tables point at the gate" [ "$(got_into_sampler "$PM")" -gt 0 ]

for i in 1 2 3; do pg_open "$i"; done
for i in 1 2 3; do
    b=${BK[$i]}
    check "backend $i ($b), forked while on: no sampler body (fork does not copy it)" \
        [ "$(sampler_bodies "$b")" = 0 ]
    check "backend $i: its gate data page is wiped (no mark, closed)" \
        [ "$(sampler_gate "$b" mark) $(sampler_gate "$b" state)" = "0 0" ]
    check "backend $i: its call tables point at the stand-ins" [ "$(got_into_sampler "$b")" -gt 0 ]
    check "backend $i: serves a query while the postmaster samples" serves "$i"
    check "backend $i: no thread of it entered a body" [ "$(sampler_gate "$b" inside)" = 0 ]
done
check "a connection opened and closed while on works" [ "$(pg_sql 'select 6 * 7')" = 42 ]

send 'prof off' 'profiling is now off'
off_sr=$(sr "$PM")
echo "after 'prof off': memprof's mappings in the postmaster (Size, Rss KiB): $off_sr"
check "off: the postmaster's body is unmapped, the gate stays" \
    [ "$(sampler_regions "$PM") $(sampler_bodies "$PM")" = "1 0" ]
check "off: memprof's mappings in the postmaster are 8 KiB, at most 8 KiB resident ($off_sr)" \
    sampler_gate_only "$off_sr"
check "off: no slot of the postmaster points at the stand-ins" [ "$(got_into_sampler "$PM")" = 0 ]

for i in 1 2 3; do
    b=${BK[$i]}
    s=$(sr "$b")
    echo "backend $i ($b) after the postmaster's 'prof off': memprof's mappings (Size, Rss KiB): $s"
    check "backend $i: only the gate is mapped, 8 KiB, at most 8 KiB resident ($s)" sampler_gate_only "$s"
    check "backend $i: serves a query through the stand-ins (passing straight through)" serves "$i"
done

b=${BK[1]}
mp -p "$b" -e info
check "backend 1: a session on it works" mp_ok
check "backend 1: it says the backend inherited the stand-ins from the postmaster by fork" \
    err_has "process $b inherited memprof's sampler stand-ins by fork from process $PM, which memprof was sampling then: [1-9][0-9]* call-table slots? put back"
check "backend 1: it does not say a memprof died there" err_lacks 'memprof that is gone'
check "backend 1: it says what stays (the stand-ins' page, inert)" err_has "stand-ins' page \(8 KiB\) stays mapped, inert"
check "backend 1: info says the page came from the postmaster and how it was cleared" \
    out_has "inherited from process $PM by fork: its slots were put back"
check "backend 1: no slot points at the stand-ins any more" [ "$(got_into_sampler "$b")" = 0 ]
check "backend 1: serves a query after" serves 1
mp -p "$b" -e info
check "backend 1: a later session has nothing to put back and says nothing of it" \
    err_lacks 'inherited memprof'
check "backend 1: its info still says what the page is" out_has "inherited from process $PM by fork"
mp -p "${BK[2]}" -e 'info --json'
check "backend 2: info --json names the postmaster in allocator.sampler.inherited_from" \
    [ "$(jf 'd["allocator"]["sampler"]["inherited_from"]')" = "$PM" ]
for i in 2 3; do
    mp -p "${BK[$i]}" -e info
    check "backend $i: a session puts its slots back" [ "$(got_into_sampler "${BK[$i]}")" = 0 ]
    check "backend $i: serves a query after" serves "$i"
done

check "the backend forked before 'prof on' has nothing of memprof's" [ "$(sr "$OLD")" = "0 0" ]
pg_open 4
b=${BK[4]}
s=$(sr "$b")
check "a backend forked after 'prof off' maps only the gate ($s)" sampler_gate_only "$s"
check "a backend forked after 'prof off': no slot points at the stand-ins" [ "$(got_into_sampler "$b")" = 0 ]
check "a backend forked after 'prof off' serves" serves 4

send 'prof on' 'profiling is now on'
check "second cycle: the gate was reused" file_has "$WORK/pm.out" "reusing its stand-ins' page"
send 'prof off' 'profiling is now off'
close_session
check "the postmaster's session ended well" [ "$MPRC" = 0 ]
s=$(sr "$PM")
echo "after a second cycle: memprof's mappings in the postmaster (Size, Rss KiB): $s"
check "second cycle: still one gate, 8 KiB, at most 8 KiB resident ($s)" sampler_gate_only "$s"
check "the postmaster accepts connections after" [ "$(pg_sql 'select 6 * 7')" = 42 ]
check "the postmaster is left untraced" untouched "$PM"
