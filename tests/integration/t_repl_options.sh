# One option parser for every command (issue 11 item 3): an unknown option
# is an error and never a value (pprof --json wrote a file named --json),
# "--" ends the options, and a word starting with '-' after it is a value.
. "$SRCDIR/tests/integration/lib.sh"
err_has() { grep -Eq -- "$1" <<<"$ERR"; }
out_has() { grep -Eq -- "$1" <<<"$OUT"; }

start_target session_idle
mp -p "$PID" -e 'prof on' -e "dump $WORK/one.heap" -e 'prof off'
check "a dump to work with" [ -s "$WORK/one.heap" ]

mp -e "load $WORK/one.heap" -e 'pprof --json'
check "pprof --json: unknown option" err_has "unknown option '--json'"
check "pprof --json: no file named --json" [ ! -e "$WORK/--json" ]
mp -e "load $WORK/one.heap" -e 'top --nosuch'
check "top --nosuch: unknown option" err_has "top: unknown option '--nosuch'"
mp -p "$PID" -e 'dump --nosuch'
check "dump --nosuch: unknown option" err_has "dump: unknown option '--nosuch'"
mp -p "$PID" -e 'info --verbose'
check "info --verbose: unknown option" err_has "info: unknown option '--verbose'"

cp "$WORK/one.heap" "$WORK/-dash.heap"
mp -e 'load -- -dash.heap' -e 'dumps'
check "load -- -dash.heap" [ "$RC" -eq 0 ]
check "the profile is named -dash.heap" out_has '^-dash.heap '
mp -e "load $WORK/one.heap" -e 'pprof -- -out.pb.gz'
check "pprof -- -out.pb.gz writes that file" [ -s "$WORK/-out.pb.gz" ]
mp -e "load $WORK/one.heap" -e 'top --thread=abc'
check "--name=VALUE passes the value" err_has "not 'abc'"
check "the target is untouched" assert_untouched "$PID"
echo "options ok"
