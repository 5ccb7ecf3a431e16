#!/usr/bin/env bash
# servers.sh [SERVER...] - on real servers from Debian that use its
# libjemalloc2, started here with profiling ready but off: how long memprof
# holds the one thread it borrows for each `stats` summary and each `dump`,
# and the part of that spent in the pre-call check (the borrowed thread's
# stack walked through every object it crosses: clickhouse-server's
# libclickhouse.so is an 82 MB object).  Every stop as attach/ measures it
# (MEMPROF_TRACE_PAUSES=1: from PTRACE_INTERRUPT to PTRACE_DETACH), NS of
# each per session; median, p99 and max, idle (this benchmark's load only)
# and with every CPU busy.  SERVER: clickhouse (clickhouse-server), redis
# (redis-server); by default those installed.  Nothing is installed here:
# apt-get install clickhouse-server redis-server.
set -u
: "${MEMPROF:?set MEMPROF to the memprof binary}"
NS=${NS:-40}        # stats summaries and dumps per session
. "$(dirname "$0")/stats.sh"
bench_scratch memprof-servers

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# until_ok SECONDS CMD...: CMD until it succeeds, at most SECONDS.
until_ok() {
    local end=$((SECONDS + $1)); shift
    until "$@" >/dev/null 2>&1; do
        [ "$SECONDS" -lt "$end" ] || return 1
        sleep 0.2
    done
}

# start_clickhouse: Debian's config with every path under $work and free
# ports, run as user clickhouse.
start_clickhouse() {
    local dir=$work/clickhouse http tcp inter
    mkdir -p "$dir"
    http=$(free_port) tcp=$(free_port) inter=$(free_port)
    sed -e "s|/var/lib/clickhouse/|$dir/|g" -e "s|/var/log/clickhouse-server/|$dir/|g" \
        -e "s|<http_port>8123<|<http_port>$http<|" -e "s|<tcp_port>9000<|<tcp_port>$tcp<|" \
        -e "s|<interserver_http_port>9009<|<interserver_http_port>$inter<|" \
        -e '/<https_port>/d' -e '/<tcp_port_secure>/d' -e '/<listen_host>::1</d' \
        /etc/clickhouse-server/config.xml >"$dir/config.xml"
    cp /etc/clickhouse-server/users.xml "$dir/"
    chmod 755 "$work"
    chown -R clickhouse: "$dir"
    # exec all the way down (setpriv, env): $! is the server itself.
    (cd "$dir" && exec setpriv --reuid=clickhouse --regid=clickhouse --init-groups \
        env MALLOC_CONF=prof:true,prof_active:false /usr/sbin/clickhouse-server \
        --config="$dir/config.xml" >"$dir/out.log" 2>&1) &
    pid=$!
    until_ok 60 clickhouse-client --port "$tcp" -q 'select 1' ||
        { echo "servers.sh: clickhouse-server did not answer:" >&2; tail -5 "$dir"/*.log >&2; exit 1; }
}

start_redis() {
    local port
    port=$(free_port)
    MALLOC_CONF=prof:true,prof_active:false redis-server --port "$port" --bind 127.0.0.1 \
        --save '' --appendonly no --dir "$work" >"$work/redis.log" 2>&1 &
    pid=$!
    until_ok 10 sh -c "redis-cli -p $port ping | grep -q PONG" ||
        { echo "servers.sh: redis-server did not answer" >&2; exit 1; }
}

installed() {
    case $1 in
    clickhouse) command -v clickhouse-server >/dev/null || [ -x /usr/sbin/clickhouse-server ] ;;
    redis)      command -v redis-server >/dev/null ;;
    *)          echo "unknown server $1 (clickhouse or redis)" >&2; exit 2 ;;
    esac
}

# largest_object: the largest file mapped executable in $pid, with its size.
largest_object() {
    awk '$2 ~ /x/ && $6 ~ /^\// {print $6}' "/proc/$pid/maps" | sort -u |
        while read -r f; do printf '%s %s\n' "$(stat -c %s "$f" 2>/dev/null || echo 0)" "$f"; done |
        sort -n | tail -1 | awk '{printf "%s (%.0f MB)", $2, $1 / 1e6}'
}

# session CMD LABEL: NS times CMD in one session (after one of each to warm
# the session: the first stats also reads the size classes); prints the
# held and check figures of the last NS stops.
session() {
    local cmd=$1 label=$2 i
    { echo "$cmd"; for i in $(seq "$NS"); do echo "$cmd"; done; echo "prof off"; } >"$work/script"
    [ "$cmd" = dump ] && sed -i '1i prof on' "$work/script"
    MEMPROF_TRACE_PAUSES=1 "$MEMPROF" -q -p "$pid" -x "$work/script" >/dev/null 2>"$work/err" ||
        { echo "servers.sh: memprof failed:" >&2; tail -5 "$work/err" >&2; exit 1; }
    # The stops of the NS commands: those before the last (prof off).
    grep -E '^pause ' "$work/err" | grep -v refused | head -n -1 | tail -n "$NS" >"$work/stops"
    local held check
    held=$(sed -E 's/.* us=([0-9.]+) .*/\1/' "$work/stops" | stats_tail)
    check=$(sed -E 's/.* check=([0-9.]+) .*/\1/' "$work/stops" | stats_tail)
    read -r h50 h99 hmax hn <<<"$held"
    read -r c50 c99 cmax _ <<<"$check"
    printf '  %-7s %-6s held  p50 %6s us  p99 %6s us  max %6s us   check  p50 %5s us  p99 %5s us  max %5s us  (%d stops)\n' \
        "$label" "$cmd" "$h50" "$h99" "$hmax" "$c50" "$c99" "$cmax" "$hn"
}

servers=("$@")
if [ ${#servers[@]} -eq 0 ]; then
    for s in clickhouse redis; do installed "$s" && servers+=("$s"); done
fi
[ ${#servers[@]} -gt 0 ] || { echo "servers.sh: none of clickhouse-server, redis-server is installed" >&2; exit 1; }
for s in "${servers[@]}"; do
    installed "$s" || { echo "servers.sh: $s is not installed" >&2; exit 1; }
    "start_$s"
    echo "== $s (pid $pid; largest object $(largest_object); $(ls /proc/$pid/task | wc -l) threads)"
    for load in idle loaded; do
        [ "$load" = loaded ] && load_start
        session stats "$load"
        session dump "$load"
        [ "$load" = loaded ] && load_stop
    done
    kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; pid=
done
echo "goal (issue 22): stats held <= 1 ms idle; pre-call check <= 1 ms on any object size"
