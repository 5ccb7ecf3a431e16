# A process holding two copies of jemalloc (a static one renamed to
# _rjem_mallctl in the executable, and libjemalloc.so.2 preloaded): memprof
# lists both, drives the one the user picks, and refuses a copy that is not
# there.
. "$SRCDIR/tests/integration/lib.sh"
LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2 start_target static_rjem

mp -p "$PID" -e jemalloc
assert_ok
assert_err 'holds 2 copies of jemalloc'   # a status line: on stderr
assert_out '_rjem_mallctl at 0x[0-9a-f]+ in .*static_rjem \(linked in, \.symtab only\)'
assert_out ' mallctl at 0x[0-9a-f]+ in /usr/lib/x86_64-linux-gnu/libjemalloc\.so\.2 \(shared object\)'

# pick the shared copy: info says where mallctl was found
mp -p "$PID" -e 'jemalloc 1' -e info
assert_ok
assert_out 'found in +/usr/lib/x86_64-linux-gnu/libjemalloc\.so\.2'
mp -p "$PID" -e 'jemalloc 0' -e info
assert_ok
assert_out "symbol +_rjem_mallctl at 0x[0-9a-f]+ \(prefix '_rjem_'"

# a copy that does not exist
mp -p "$PID" -e 'jemalloc 2'
assert_fail
assert_err 'has 2 jemalloc copies'
alive "$PID" || die "target died"
echo "copies ok"
