#!/usr/bin/env bash
# sampler.sh - the cost of memprof's heap sampler to the process it is in,
# against the same process without it and with the tools people use today
# for an unprepared process, attached at run time (heaptrack -p, bcc's
# memleak -p), all measured in this one run:
#   1. alloc_loop: ns per malloc/free pair (best of 5 rounds of a million),
#      plain, sampler at the default rate (2^19), sampler at 2^12, after
#      'prof off' (the gate alone), memleak, heaptrack (or the reason
#      memleak could not run here, as it said);
#   2. redis-server started plainly (Debian's: jemalloc without prof:true)
#      under redis-benchmark (SET/GET of 256 bytes over 100,000 keys, 50
#      clients): requests per second without and with the sampler, and
#      the top of the sampler's profile;
#   3. Debian's nginx (glibc malloc, one worker) under wrk (50 connections,
#      2 threads, DURATION s a run, default 10): requests per second
#      without the sampler, with it at the default rate and after
#      'prof off', twice each in turn (the mean of each), and the top of
#      the profile.
# Prints each figure and its ratio to the plain one.  Figures, not limits:
# nothing here passes or fails on speed.
set -u
: "${MEMPROF:?}" "${LOOP:?}"
work=$(mktemp -d /tmp/memprof-bench.XXXXXX)
pids=()
trap 'exec 3>&- 2>/dev/null; for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$work"' EXIT

wait_for() {    # wait_for FILE REGEX [COUNT], for up to $WAIT_S seconds (30)
    local n=${3:-1}
    for _ in $(seq $((${WAIT_S:-30} * 20))); do
        [ "$(grep -Ec -- "$2" "$1" 2>/dev/null)" -ge "$n" ] && return 0
        sleep 0.05
    done
    echo "timed out waiting for /$2/ in $1" >&2
    exit 1
}

# one_round LABEL: a timed batch in the loop, its figure printed.
rounds=0
one_round() {
    rounds=$((rounds + 1))
    kill -USR1 "$loop"
    wait_for "$work/loop.out" '^ns_per_pair' "$rounds"
    ns=$(grep '^ns_per_pair' "$work/loop.out" | tail -1 | awk '{print $2}')
    [ -z "${base:-}" ] && base=$ns
    [ "$1" = "warm-up (not counted)" ] && base=
    printf '  %-34s %8.2f ns/pair   x%.2f\n' "$1" "$ns" "$(awk -v a="$ns" -v b="$base" 'BEGIN {print a / b}')"
}

echo "== malloc/free pairs (glibc malloc, -O2 without frame pointers)"
"$LOOP" >"$work/loop.out" 2>&1 &
loop=$!; pids+=("$loop")
wait_for "$work/loop.out" '^ready'
one_round "warm-up (not counted)"
base=
one_round "no sampler"
mkfifo "$work/cmds"
"$MEMPROF" -p "$loop" <"$work/cmds" >"$work/mp.out" 2>&1 &
mp=$!; pids+=("$mp")
exec 3>"$work/cmds"
echo 'prof on' >&3
wait_for "$work/mp.out" "sampler is in process"
one_round "sampler, every 2^19 bytes"
echo 'prof sample 12' >&3
wait_for "$work/mp.out" "samples forgotten"
one_round "sampler, every 2^12 bytes"
echo 'prof off' >&3
wait_for "$work/mp.out" "profiling is now off"
exec 3>&-
wait "$mp"
one_round "after prof off (the gate alone)"

# bcc's memleak (bpfcc-tools): uprobes on the C library's allocation
# functions, every call counted in the kernel.  bcc compiles its BPF
# program as it starts, against the running kernel's headers
# (/lib/modules/RELEASE/build, or /sys/kernel/kheaders.tar.xz).  A kernel
# with neither (a VM's own build) is given Debian's newest linux-headers
# tree: a uprobe reads only the registers of a user-space call (struct
# pt_regs, the same in every kernel of the architecture).  Debian splits
# the tree in two (common, arch); bcc reads one, so the two are joined as
# symlinks.  memleak goes before heaptrack, whose library stays loaded in
# the process once injected.  It is tried for real: when it cannot run,
# its own words say why.
memleak_headers() {     # sets ksrc (empty: bcc finds its own) and kheaders
    local rel arch dir
    rel=$(uname -r)
    ksrc= kheaders="kernel $rel's headers"
    [ -e "/lib/modules/$rel/build" ] || [ -e /sys/kernel/kheaders.tar.xz ] && return
    kheaders="no headers of kernel $rel (no /lib/modules/$rel/build, no /sys/kernel/kheaders.tar.xz)"
    arch=$(dpkg --print-architecture 2>/dev/null)
    dir=$(ls -d /usr/src/linux-headers-[0-9]*-"$arch" 2>/dev/null | grep -Ev -- '-(cloud|rt)-' | sort -V | tail -1)
    [ -n "$dir" ] && [ -d "${dir%-"$arch"}-common" ] || return
    mkdir "$work/kheaders"
    cp -rs "${dir%-"$arch"}-common/." "$work/kheaders/" && cp -rsf "$dir/." "$work/kheaders/" || return
    ksrc=$work/kheaders
    kheaders="compiled against Debian's ${dir##*/} (kernel $rel has no headers of its own)"
}
memleak_why() {     # its messages, without Python's traceback
    grep -Ev '^(Traceback|  |Attaching)' "$work/ml.log" | head -4 | paste -sd '|' | sed 's/|/; /g'
}
if command -v memleak-bpfcc >/dev/null; then
    memleak_headers
    env ${ksrc:+BCC_KERNEL_SOURCE="$ksrc"} memleak-bpfcc -p "$loop" >"$work/ml.log" 2>&1 &
    ml=$!; pids+=("$ml")
    # its first report (every 5 s) comes once every probe is attached
    for _ in $(seq 1200); do
        grep -q 'stacks with outstanding allocations' "$work/ml.log" && break
        kill -0 "$ml" 2>/dev/null || break
        sleep 0.1
    done
    if grep -q 'stacks with outstanding allocations' "$work/ml.log"; then
        WAIT_S=900 one_round "memleak-bpfcc -p (uprobes)"    # about 13 us a pair: a minute and more
        echo "    (memleak: $kheaders)"
        kill -TERM "$ml"    # SIGINT: ignored by a background Python
        wait "$ml" 2>/dev/null
    elif kill -0 "$ml" 2>/dev/null; then
        kill -9 "$ml"
        wait "$ml" 2>/dev/null
        echo "  memleak not measured: memleak-bpfcc -p gave no report in 120 s ($kheaders): $(memleak_why)"
    else
        wait "$ml" 2>/dev/null
        echo "  memleak not measured: memleak-bpfcc -p failed ($kheaders): $(memleak_why)"
    fi
else
    echo "  memleak not measured: memleak-bpfcc is not installed (apt-get install bpfcc-tools)"
fi

if command -v heaptrack >/dev/null; then
    (cd "$work" && exec heaptrack -p "$loop" -o "$work/ht") >"$work/ht.log" 2>&1 &
    ht=$!; pids+=("$ht")
    wait_for "$work/ht.log" 'heaptrack output will be written|injecting|attaching' || true
    sleep 2     # heaptrack gives no sign that its library is in
    one_round "heaptrack -p (runtime attach)"
    kill -INT "$ht" 2>/dev/null
else
    echo "  heaptrack not installed: no anchor"
fi

echo "== redis-server (Debian's, jemalloc without prof:true) under redis-benchmark"
if command -v redis-server >/dev/null && command -v redis-benchmark >/dev/null; then
    port=$((20000 + RANDOM % 20000))
    redis-server --port "$port" --save '' --appendonly no >"$work/redis.log" 2>&1 &
    rpid=$!; pids+=("$rpid")
    wait_for "$work/redis.log" 'Ready to accept'
    bench() {
        redis-benchmark -p "$port" -q -n "${REQS:-200000}" -c 50 -r 100000 -t set,get -d 256 2>/dev/null | tr '\r' '\n' |
            awk -F'[: ]+' '/requests per second/ {s += $2; n++} END {printf "%.0f", s / n}'
    }
    bench >/dev/null    # warm up (and fill 100,000 keys: a live heap to sample)
    plain=$(bench)
    printf '  %-34s %8s req/s\n' "no sampler" "$plain"
    mkfifo "$work/rcmds"
    "$MEMPROF" -p "$rpid" <"$work/rcmds" >"$work/rmp.out" 2>&1 &
    pids+=($!)
    exec 4>"$work/rcmds"
    echo 'prof on' >&4
    wait_for "$work/rmp.out" "sampler is in process"
    with=$(bench)
    printf '  %-34s %8s req/s   x%.3f\n' "sampler, every 2^19 bytes" "$with" \
        "$(awk -v a="$with" -v b="$plain" 'BEGIN {print a / b}')"
    echo 'dump' >&4
    echo 'top 3' >&4
    exec 4>&-
    wait_for "$work/rmp.out" "took its sampler out"
    grep -A4 '^Total' "$work/rmp.out" | sed 's/^/    /'
else
    echo "  redis-server or redis-benchmark not installed"
fi

echo "== nginx (Debian's, glibc malloc, one worker) under wrk"
if command -v nginx >/dev/null && command -v wrk >/dev/null; then
    port=$((20000 + RANDOM % 20000))
    mkdir -p "$work/nginx/www" "$work/nginx/tmp"
    head -c 4096 /dev/zero | tr '\0' x >"$work/nginx/www/index.html"
    chmod -R a+rX "$work/nginx/www"; chmod 711 "$work"
    cat >"$work/nginx/nginx.conf" <<EOF
daemon off;
master_process on;
worker_processes 1;
user www-data $(id -gn www-data);
pid $work/nginx/nginx.pid;
error_log $work/nginx/nginx.err;
events { worker_connections 256; }
http {
    access_log off;
    client_body_temp_path $work/nginx/tmp/body;
    proxy_temp_path $work/nginx/tmp/proxy;
    fastcgi_temp_path $work/nginx/tmp/fastcgi;
    uwsgi_temp_path $work/nginx/tmp/uwsgi;
    scgi_temp_path $work/nginx/tmp/scgi;
    server { listen 127.0.0.1:$port; root $work/nginx/www; }
}
EOF
    nginx -c "$work/nginx/nginx.conf" -p "$work/nginx" >"$work/nginx.out" 2>&1 &
    npid=$!; pids+=("$npid")
    for _ in $(seq 200); do curl -sf "http://127.0.0.1:$port/" >/dev/null 2>&1 && break; sleep 0.05; done
    worker=$(pgrep -P "$npid" | head -1)
    wrk_rps() {   # requests per second of one wrk run (errors on stderr)
        wrk -t2 -c50 -d"${DURATION:-10}"s "http://127.0.0.1:$port/" >"$work/wrk.out" 2>&1
        local errors
        errors=$(grep -E 'Non-2xx|Socket errors' "$work/wrk.out" | tr '\n' ' ')
        [ -z "$errors" ] || echo "  wrk saw errors: $errors" >&2
        awk '/^Requests\/sec/ {print $2}' "$work/wrk.out"
    }
    add() { awk -v a="$1" -v b="$2" 'BEGIN {print a + b}'; }
    wrk_rps >/dev/null      # warm up
    mkfifo "$work/ncmds"
    "$MEMPROF" -p "$worker" <"$work/ncmds" >"$work/nmp.out" 2>&1 &
    pids+=($!)
    exec 5>"$work/ncmds"
    plain=0 with=0 off=0
    for round in 1 2; do
        plain=$(add "$plain" "$(wrk_rps)")
        echo 'prof on' >&5
        wait_for "$work/nmp.out" "sampler is in process" "$round"
        with=$(add "$with" "$(wrk_rps)")
        if [ "$round" = 2 ]; then echo 'dump' >&5; echo 'top 3' >&5; fi
        echo 'prof off' >&5
        wait_for "$work/nmp.out" "sampler is out of process" "$round"
        off=$(add "$off" "$(wrk_rps)")
    done
    exec 5>&-
    row() { printf '  %-34s %8.0f req/s   x%.3f\n' "$1" "$(awk -v a="$2" 'BEGIN {print a / 2}')" \
                "$(awk -v a="$2" -v b="$plain" 'BEGIN {print a / b}')"; }
    row "no sampler" "$plain"
    row "sampler, every 2^19 bytes" "$with"
    row "after prof off (the gate alone)" "$off"
    grep -A4 '^Total' "$work/nmp.out" | sed 's/^/    /'
else
    echo "  nginx or wrk not installed (apt-get install nginx wrk)"
fi
