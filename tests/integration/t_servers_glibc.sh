# Real glibc malloc servers from Debian, as an operator meets them: an
# nginx worker and a PostgreSQL backend.  'info' names glibc malloc,
# 'stats', 'memory' and 'purge' work, heap profiling is refused saying
# what to do, and the servers keep answering their clients during and after
# the sessions.
. "$SRCDIR/tests/integration/lib.sh"

served() {          # SERVER: nginx answers / postgres answers a query
    case $1 in
    nginx) curl -sf "http://127.0.0.1:$NGINX_PORT/" >/dev/null ;;
    postgres) [ "$(pg_sql 'select 6 * 7')" = 42 ] ;;
    esac
}

# A client keeps asking while memprof works; it counts the failures.
client_loop() {     # SERVER FILE: until FILE is removed
    local fails=0 n=0
    while [ -e "$2" ]; do
        served "$1" || fails=$((fails + 1))
        n=$((n + 1))
    done
    echo "$n $fails" >"$2.result"
}

server_checks() {   # SERVER PID
    local server=$1 pid=$2 flag="$WORK/client.$1"
    touch "$flag"
    client_loop "$server" "$flag" &
    local client=$!
    mp -p "$pid" -e info -e 'info --json'
    check "$server: attached" mp_ok
    check "$server: info names glibc malloc" out_has '^allocator +glibc malloc in /.*libc\.so'
    mp -p "$pid" -e 'stats --json'
    check "$server: stats read" mp_ok
    check "$server: stats has at least the main arena" [ "$(jf 'len(d["arenas"])')" -ge 1 ]
    check "$server: in use is non-zero" [ "$(jf 'd["in_use"] > 0')" = True ]
    mp -p "$pid" -e memory
    check "$server: memory reconciles with glibc" out_has '^allocator heap +[0-9.]+ MiB +\(glibc malloc'
    mp -p "$pid" -e 'purge --json'
    check "$server: purge ran" mp_ok
    check "$server: purge gives the hold time" [ "$(jf 'd["pause_us"] > 0')" = True ]
    mp -p "$pid" -e 'prof on' -e 'dump' -e 'prof off'
    check "$server: prof on puts memprof's sampler in, under load" \
        out_has "^profiling is now on \\(was off\\): memprof's sampler is in process $pid"
    check "$server: a dump of its samples" out_has '^dump1: [0-9]+ stacks'
    check "$server: prof off takes it out" out_has "^profiling is now off \\(was on\\): memprof's sampler is out"
    rm -f "$flag"
    wait "$client"
    read -r asked failed <"$flag.result"
    check "$server: its client was answered throughout ($asked requests, $failed failed)" \
        bash -c '[ "$1" -gt 0 ] && [ "$2" = 0 ]' _ "$asked" "$failed"
    check "$server: it still answers" served "$server"
    check "$server: left untouched" untouched "$pid"
}

start_nginx
server_checks nginx "$(nginx_worker_pid)"
check "nginx: master untouched" untouched "$PID"

start_postgres
server_checks postgres "$(pg_backend_pid)"
check "postgres: the postmaster untouched" untouched "$PID"
check "postgres: the backend memprof worked on is still alive" alive "$(pg_backend_pid)"
