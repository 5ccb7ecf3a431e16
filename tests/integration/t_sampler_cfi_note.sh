# When memprof's sampler goes in, objects whose stacks it cannot walk
# through are named, and only those: a library with code but no
# call-frame information is named; a data-only library (no code of its
# own, as Debian's libicudata, mapped by every PostgreSQL process) is not,
# since no stack passes through it.
. "$SRCDIR/tests/integration/lib.sh"

CONF= start_target cfi_objects
check "the target maps both libraries" \
    sh -c "grep -q 'libdata_only.so' /proc/$PID/maps && grep -q 'libno_cfi.so' /proc/$PID/maps"
mp -p "$PID" -e 'prof on'
check "prof on works" mp_ok
check "the note names the library with code and no call-frame information" \
    err_has '^note: libno_cfi\.so has code of its own but no call-frame information memprof could read: stacks that pass through it stop at its code$'
check "the data-only library is not named (no stack passes through it)" err_lacks 'libdata_only'
check "the process is left running, untraced" untouched "$PID"

# PostgreSQL: its processes map libicudata (data only) and nothing else
# without call-frame information: no note at all.
start_postgres
BACKEND=$(pg_backend_pid)
check "the backend maps libicudata" file_has "/proc/$BACKEND/maps" 'libicudata\.so'
mp -p "$BACKEND" -e 'prof on' -e 'prof off'
check "postgres: prof on works" mp_ok
check "postgres: no note of objects without call-frame information" \
    err_lacks 'no call-frame information'
check "postgres: the backend still answers" sh -c "[ \"\$(psql -h '$PGSOCK' -p '$PG_PORT' -U postgres -X -At -c 'select 6 * 7')\" = 42 ]"
