# memprof serve's /metrics over many processes: read several at once
# (--scrape-parallel) within the scrape's deadline, which Prometheus' header
# X-Prometheus-Scrape-Timeout-Seconds sets.  Eight processes (four jemalloc,
# four glibc) and one whose only thread waits in vfork, where no ptrace stop
# reaches it (memprof's own limit would give up after 5 s): that one is down
# at the deadline, its worker killed, and the eight are up with their
# series, in pid order.  Every process is left as it was: the one in vfork
# resumes when its child ends and is read at the next scrape.  With one
# worker at a time and the slow process first, the others are not reached
# by the deadline and are said to be down, not answered late.
. "$SRCDIR/tests/integration/lib.sh"

mkdir "$WORK/bin" && cp "$TARGETS/light_alloc" "$TARGETS/glibc_live" "$TARGETS/vfork_waiter" "$WORK/bin/"
TARGETS=$WORK/bin
CONF= start_target vfork_waiter
SLOWP=$PID
SLOW_OUT=$TARGET_OUT
CHILD=$(sed -n 's/^ready child=//p' "$SLOW_OUT")
PIDS+=("$CHILD")
FAST=()
for i in 1 2 3 4; do
    CONF= start_target light_alloc; FAST+=("$PID")
    CONF= start_target glibc_live; FAST+=("$PID")
done
# By command: the child in vfork (vfork_child) is not one of them.
RULES=(--target comm=light_alloc --target comm=glibc_live --target comm=vfork_waiter)
start_serve "${RULES[@]}"
FIRST_URL=$SERVE_URL FIRST_PID=$SERVE_PID

scrape() { http GET /metrics -H "X-Prometheus-Scrape-Timeout-Seconds: $1"; }
up_of() { awk -v p="$1" 'index($0, "memprof_target_up{pid=\"" p "\",") == 1 { print $2 }' "$WORK/body"; }
all_up() {
    local p
    for p in "${FAST[@]}"; do [ "$(up_of "$p")" = "$1" ] || return 1; done
}
# The reported time of the slow process: below memprof's own 5 s limit on a
# stop, so the deadline ended it, not memprof giving up.
slow_duration_below() {
    awk -v p="$SLOWP" -v lim="$1" 'index($0, "memprof_target_scrape_duration_seconds{pid=\"" p "\",") == 1 { f = $2 < lim } END { exit !f }' "$WORK/body"
}
series_of_every_fast_one() {
    local p
    for p in "${FAST[@]}"; do
        grep -Eq "^(jemalloc_allocated_bytes|memprof_heap_in_use_bytes)\\{pid=\"$p\",.*\\} [0-9]+$" "$WORK/body" || return 1
        grep -Eq "^memprof_target_stopped_seconds\\{pid=\"$p\",.*\\} [0-9.]+$" "$WORK/body" || return 1
    done
}
in_pid_order() {
    grep '^memprof_target_up{' "$WORK/body" | sed 's/.*pid="\([0-9]*\)".*/\1/' >"$WORK/order"
    sort -n "$WORK/order" | cmp -s - "$WORK/order"
}
every_target_untouched() {
    local p
    for p in "$SLOWP" "${FAST[@]}"; do assert_untouched "$p" || return 1; done
}

scrape 3
check "/metrics with a 3 s scrape timeout: 200" status_is 200
check "the eight processes are up" all_up 1
check "their series are there (allocator figures, the time their thread was stopped)" series_of_every_fast_one
check "the process waiting in vfork is down" [ "$(up_of "$SLOWP")" = 0 ]
check "it was ended at the deadline (2.5 s), below memprof's own 5 s limit" slow_duration_below 4
check "the agent's log says it was not read within the scrape's 2.5 s" \
    grep -q "process $SLOWP was not read within the scrape's 2.5 s" "$SERVE_LOG"
check "nine processes" [ "$(grep -c '^memprof_target_up{' "$WORK/body")" = 9 ]
check "in pid order" in_pid_order
check "promtool check metrics finds nothing to say" sh -c "promtool check metrics <'$WORK/body'"
check "every process untouched: alive, no thread stopped or traced" every_target_untouched
check "the agent is alive" alive "$SERVE_PID"

# One worker at a time: the slow process (the lowest pid) takes the whole
# budget, and the others are not reached.
if [ "$SLOWP" -lt "${FAST[0]}" ]; then
    start_serve "${RULES[@]}" --scrape-parallel 1
    scrape 2
    check "--scrape-parallel 1: 200" status_is 200
    check "--scrape-parallel 1: the slow process first holds the only worker; the others are down" all_up 0
    check "the log says they were not reached within the scrape's 1.5 s" \
        grep -q "process ${FAST[0]} was not reached within the scrape's 1.5 s" "$SERVE_LOG"
    check "every process untouched after the second agent" every_target_untouched
    kill "$SERVE_PID"; wait "$SERVE_PID" 2>/dev/null
    SERVE_URL=$FIRST_URL SERVE_PID=$FIRST_PID
fi

# The vfork ends: the process goes on, and is read at the next scrape.
kill -TERM "$CHILD"
wait_until 10 "the process in vfork to resume" grep -q '^resumed' "$SLOW_OUT"
check "the process that waited in vfork resumed, untouched" assert_untouched "$SLOWP"
scrape 10
check "the next scrape reads it: up" [ "$(up_of "$SLOWP")" = 1 ]
check "and the eight again" all_up 1

"$MEMPROF" serve --scrape-parallel 0 >/dev/null 2>"$WORK/err"; RC=$?
check "--scrape-parallel 0 is refused, saying the range" sh -c "[ $RC = 2 ] && grep -q 'scrape-parallel takes 1 to 256' '$WORK/err'"
