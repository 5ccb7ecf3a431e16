# A process holding two copies of jemalloc (a static one renamed to
# _rjem_mallctl in the executable, and libjemalloc.so.2 preloaded): memprof
# lists both, drives the one the user picks, and refuses a copy that is not
# there.
. "$SRCDIR/tests/integration/lib.sh"
LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2 start_target static_rjem

mp -p "$PID" -e jemalloc
check "jemalloc lists the copies" mp_ok
check "two copies (a status line, on stderr)" err_has 'holds 2 copies of jemalloc'
check "the static copy, .symtab only" \
    out_has '_rjem_mallctl at 0x[0-9a-f]+ in .*static_rjem \(linked in, \.symtab only\)'
check "the shared copy" \
    out_has ' mallctl at 0x[0-9a-f]+ in /usr/lib/x86_64-linux-gnu/libjemalloc\.so\.2 \(shared object\)'

# pick the shared copy: info says where mallctl was found
mp -p "$PID" -e 'jemalloc 1' -e info
check "jemalloc 1 runs" mp_ok
check "jemalloc 1 drives the shared copy" out_has 'found in +/usr/lib/x86_64-linux-gnu/libjemalloc\.so\.2'
mp -p "$PID" -e 'jemalloc 0' -e info
check "jemalloc 0 runs" mp_ok
check "jemalloc 0 drives the static copy" out_has "symbol +_rjem_mallctl at 0x[0-9a-f]+ \(prefix '_rjem_'"

# a copy that does not exist
mp -p "$PID" -e 'jemalloc 2'
check "jemalloc 2 is refused" mp_failed
check "jemalloc 2: says how many there are" err_has 'has 2 jemalloc copies'
check "the process is still alive" alive "$PID"
