# memprof serve's /metrics, scraped by Debian's prometheus 2.42: a
# jemalloc process's statistics (allocated above the 100 MB known_heap
# holds) and a glibc process's, labelled with pid, comm and the name a
# --target rule gives; the exposition passes promtool's lint; a process
# that is gone or not served is a 404/403, not a failed scrape.  A jemalloc
# process with four arenas (plain, churning): its dirty and muzzy bytes per
# arena, labelled arena="i", add up to the totals read in the same stop;
# a process with 73 arenas in use gives 64 of them (the cap), and totals.
. "$SRCDIR/tests/integration/lib.sh"

# The targets run from copies in $WORK, so that the rules match them and
# no other test's processes.
mkdir "$WORK/bin" && cp "$TARGETS/known_heap" "$TARGETS/glibc_live" "$TARGETS/plain" "$WORK/bin/"
SRC_TARGETS=$TARGETS TARGETS=$WORK/bin
CONF=prof:true start_target known_heap
KH=$PID
CONF= start_target glibc_live
GL=$PID
CONF=narenas:4 start_target plain
PL=$PID
CONF=narenas:80 TARGETS=$SRC_TARGETS start_target many_arenas 72
MA=$PID
start_serve --target "name=heap-holder,exe=$WORK/bin/known_heap" --target "exe=$WORK/bin/glibc_live" \
    --target "exe=$WORK/bin/plain" --target "exe=$SRC_TARGETS/many_arenas"

http GET "/metrics?pid=$KH"
check "/metrics?pid=known_heap: 200" status_is 200
check "its content type is text format 0.0.4" header_has '^Content-Type: text/plain; version=0.0.4; charset=utf-8'
check "jemalloc_allocated_bytes above 100 MB, labelled with pid, comm and the rule's name" \
    awk -v pid="$KH" '$1 ~ "^jemalloc_allocated_bytes\\{pid=\"" pid "\",comm=\"known_heap\",name=\"heap-holder\"\\}$" && $2 > 100e6 { f = 1 } END { exit !f }' "$WORK/body"
check "memprof_target_up 1" body_has "^memprof_target_up\\{pid=\"$KH\".*\\} 1$"
check "prof:true: the sample interval, 512 KiB by default" body_has "^jemalloc_prof_sample_interval_bytes\\{pid=\"$KH\".*\\} 524288$"
check "every metric has HELP and TYPE before its samples" \
    awk '/^# TYPE/ { typed[$3] = 1; next } /^#/ { next } { n = $1; sub(/\{.*/, "", n); if (!typed[n]) exit 1 }' "$WORK/body"
check "promtool check metrics finds nothing to say" sh -c "promtool check metrics <'$WORK/body'"

http GET "/metrics?pid=$GL"
check "/metrics?pid=glibc_live: glibc's in-use bytes" body_has "^memprof_heap_in_use_bytes\\{pid=\"$GL\",comm=\"glibc_live\",name=\"glibc_live\"\\} [0-9]+$"

http GET "/metrics?pid=$PL"
# sum_is KIND: the arena="i" samples of jemalloc_arena_KIND_bytes add up to
# jemalloc_KIND_bytes.
sum_is() {
    awk -v k="$1" '$1 ~ "^jemalloc_arena_" k "_bytes\\{.*,arena=\"[0-9]+\"\\}$" { s += $2; n++ }
        $1 ~ "^jemalloc_" k "_bytes\\{" { t = $2 } END { exit !(n > 0 && s == t) }' "$WORK/body"
}
check "per-arena dirty bytes, labelled arena" body_has "^jemalloc_arena_dirty_bytes\\{pid=\"$PL\",comm=\"plain\",name=\"plain\",arena=\"[0-9]+\"\\} [0-9]+$"
check "per-arena muzzy bytes, labelled arena" body_has "^jemalloc_arena_muzzy_bytes\\{pid=\"$PL\",.*,arena=\"[0-9]+\"\\} [0-9]+$"
check "the arenas' dirty bytes add up to jemalloc_dirty_bytes" sum_is dirty
check "the arenas' muzzy bytes add up to jemalloc_muzzy_bytes" sum_is muzzy
check "their HELP says only the first 64 arenas are given" body_has "^# HELP jemalloc_arena_dirty_bytes .*first 64 arenas"
check "no sample interval for a process without prof:true (jemalloc never set one)" \
    sh -c "! grep -q '^jemalloc_prof_sample_interval_bytes{' '$WORK/body'"
check "promtool check metrics: the per-arena series pass too" sh -c "promtool check metrics <'$WORK/body'"

http GET "/metrics?pid=$MA"
check "73 arenas in use: 64 arenas' dirty bytes, each arena once" \
    sh -c "[ \$(grep '^jemalloc_arena_dirty_bytes{' '$WORK/body' | sort -u | wc -l) = 64 ]"
check "... and 64 arenas' muzzy bytes" \
    sh -c "[ \$(grep -c '^jemalloc_arena_muzzy_bytes{' '$WORK/body') = 64 ]"
check "... the totals still read" body_has "^jemalloc_dirty_bytes\\{pid=\"$MA\".*\\} [0-9]+$"

http GET "/metrics"
check "/metrics: both processes served" sh -c "grep -q 'memprof_target_up{pid=\"$KH\"' '$WORK/body' && grep -q 'memprof_target_up{pid=\"$GL\"' '$WORK/body'"
check "/metrics: no other process (the rules)" sh -c "[ \$(grep -c '^memprof_target_up{' '$WORK/body') = 4 ]"

http GET "/metrics?pid=1"
check "a process the rules leave out: 403" status_is 403
http GET "/metrics?pid=9999999999"
check "a pid too large: 400" status_is 400
sleep 1000 & GONE=$!; kill -9 "$GONE"; wait "$GONE" 2>/dev/null
http GET "/metrics?pid=$GONE"
check "a process that is gone: 404" status_is 404

# Debian's prometheus scrapes it.
cat >"$WORK/prometheus.yml" <<YML
global: {scrape_interval: 1s, scrape_timeout: 1s}
scrape_configs:
  - job_name: memprof
    static_configs: [{targets: ['${SERVE_URL#http://}']}]
YML
start_prometheus
wait_until 60 "prometheus to have scraped jemalloc_allocated_bytes" \
    prom_query "jemalloc_allocated_bytes{name=\"heap-holder\",pid=\"$KH\"}"
check "prometheus: the scrape is up" prom_query 'up{job="memprof"} == 1'
check "prometheus: jemalloc_allocated_bytes of known_heap above 100 MB" \
    prom_query "jemalloc_allocated_bytes{comm=\"known_heap\"} > 100e6"
check "prometheus: glibc_live's memprof_heap_system_bytes" \
    prom_query "memprof_heap_system_bytes{comm=\"glibc_live\"}"
check "the targets are alive" sh -c "kill -0 $KH && kill -0 $GL && kill -0 $PL"
check "the agent is alive" alive "$SERVE_PID"
