# memprof serve's command line: --help, and each bad option refused before
# anything listens (exit 2, saying what is wrong); a port already taken is
# exit 1 naming it; `memprof --help` points at serve; serve is run from
# memprof-serve beside memprof.
. "$SRCDIR/tests/integration/lib.sh"

serve() {
    "$MEMPROF" serve "$@" >"$WORK/out" 2>"$WORK/err"; RC=$?
    OUT=$(cat "$WORK/out")
    ERR=$(cat "$WORK/err")
    printf '$ memprof serve %s\n%s\n%s\n(exit %d)\n' "$*" "$OUT" "$ERR" "$RC" >&2
}
exits() { [ "$RC" = "$1" ]; }

serve --help
check "--help: exit 0, names the options" sh -c "[ $RC = 0 ] && grep -q -- '--allow-control' '$WORK/out' && grep -q -- '--target RULE' '$WORK/out'"
serve --listen nonsense
check "--listen nonsense: exit 2" exits 2
check "--listen nonsense: says ADDR:PORT" err_has "--listen 'nonsense' is not ADDR:PORT"
serve --listen 127.0.0.1:99999
check "--listen port 99999: exit 2" exits 2
serve --listen example.org:80
check "--listen a host name: exit 1, a numeric address wanted" sh -c "[ $RC = 1 ] && grep -q 'not a numeric IPv4 or IPv6 address' '$WORK/err'"
serve --target 'colour=blue'
check "--target unknown key: exit 2, naming it" sh -c "[ $RC = 2 ] && grep -q \"unknown key 'colour'\" '$WORK/err'"
serve --target 'user=no-such-user-here'
check "--target user=unknown: exit 2" sh -c "[ $RC = 2 ] && grep -q 'no such user' '$WORK/err'"
serve --target 'name=bad name'
check "--target name with a space: exit 2" exits 2
serve --target 'exe=/a,exe=/b'
check "--target a key twice: exit 2" sh -c "[ $RC = 2 ] && grep -q 'given twice' '$WORK/err'"
serve --max-connections 0
check "--max-connections 0: exit 2" exits 2
serve --timeout 0
check "--timeout 0: exit 2" exits 2
serve extra-word
check "a stray word: exit 2, naming it" sh -c "[ $RC = 2 ] && grep -q \"unexpected 'extra-word'\" '$WORK/err'"

PORT=$(free_port)
python3 -c 'import socket,sys,time; s=socket.socket(); s.bind(("127.0.0.1",int(sys.argv[1]))); s.listen(); print("ready", flush=True); time.sleep(600)' "$PORT" >"$WORK/holder" &
PIDS+=("$!")
wait_until 10 "the port to be taken" grep -q ready "$WORK/holder"
serve --listen "127.0.0.1:$PORT"
check "a port already taken: exit 1, naming it" sh -c "[ $RC = 1 ] && grep -q 'cannot listen on 127.0.0.1 port $PORT' '$WORK/err'"

OUT=$("$MEMPROF" --help)
check "memprof --help names memprof serve" grep -q 'memprof serve \[OPTION\]' <<<"$OUT"

# memprof serve is the program memprof-serve beside memprof (main/memprof.c):
# found through a symbolic link to memprof, a clear error without it, and
# none of the agent's libraries loaded by memprof itself.
mkdir -p "$WORK/link" "$WORK/alone"
ln -s "$MEMPROF" "$WORK/link/memprof"
check "through a link to memprof: serve --help runs memprof-serve" \
    eval '"$WORK/link/memprof" serve --help | grep -q -- --allow-control'
cp "$MEMPROF" "$WORK/alone/memprof"
"$WORK/alone/memprof" serve --help >"$WORK/out" 2>"$WORK/err"; RC=$?
cat "$WORK/err" >&2
check "without memprof-serve beside it: exit 1, naming the file and the fix" \
    eval '[ $RC = 1 ] && grep -q "memprof: serve: cannot run $WORK/alone/memprof-serve: No such file or directory (memprof serve is the program memprof-serve, installed beside memprof" "$WORK/err"'
needed=$(readelf -d "$MEMPROF" | awk '/NEEDED/ {print $NF}')
echo "memprof loads: $needed" >&2
check "memprof loads none of the agent's libraries" \
    eval '! grep -Eq "libmicrohttpd|libgnutls|libyaml|libcrypt" <<<"$needed"'
check "memprof-serve loads them" \
    eval 'readelf -d "$(dirname "$MEMPROF")/memprof-serve" | grep -q "NEEDED.*libmicrohttpd"'
