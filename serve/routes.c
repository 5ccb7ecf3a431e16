/* routes.c - the table of memprof serve's endpoints: each row carries its
 * method, whether it changes a process, the query it takes and its help
 * (the index page and the man page say the same). */
#include "serve/endpoints.h"

const struct route serve_routes[] = {
    {"/", "GET", false, "", false, ep_index,
     "this page: the processes served and the endpoints", false},
    {"/processes", "GET", false, "", false, ep_processes,
     "every process served, as JSON: pid, command, executable, user, allocator, "
     "profiling", false},
    {"/targets", "GET", false, "endpoint", false, ep_targets,
     "the processes served as Prometheus HTTP service discovery (http_sd_configs, "
     "Alloy's discovery.http): one target group each, this agent as the Host header "
     "named it, labelled as /metrics (pid, comm, name, container_id, pod_uid, qos), "
     "scraped at ?endpoint=heap (the default: /debug/pprof/heap), allocs or metrics "
     "with __param_pid", false},
    {"/metrics", "GET", false, "pid", false, ep_metrics,
     "Prometheus metrics (text format 0.0.4) of every process served, or of ?pid=N", false},
    {"/debug/pprof/heap", "GET", false, "pid,seconds", true, ep_pprof_heap,
     "?pid=N: the live heap from the process's own profiler (jemalloc prof:true) as a "
     "pprof profile (gzip profile.proto); nothing changed in the process; &seconds=S: "
     "as Go's, the difference of two profiles S seconds apart", false},
    {"/debug/pprof/heap", "POST", true, "pid,seconds", true, ep_pprof_heap_run,
     "?pid=N&seconds=S: memprof's sampler put in for S seconds, the live heap it saw, "
     "the sampler taken out (glibc, tcmalloc, jemalloc without prof:true)", false},
    {"/debug/pprof/allocs", "GET", false, "pid,seconds", true, ep_pprof_allocs,
     "?pid=N[&seconds=S]: the same profile as heap, alloc_space the default where the "
     "process counts allocations (prof_accum)", false},
    {"/memory-profiler/state", "GET", false, "pid", true, ep_mesos_state,
     "?pid=N: Mesos' memory-profiler state: the allocator, its profiler, the run under "
     "way and the latest finished one", true},
    {"/memory-profiler/statistics", "GET", false, "pid", true, ep_mesos_statistics,
     "?pid=N: jemalloc's statistics as malloc_stats_print writes its JSON", false},
    {"/memory-profiler/start", "POST", true, "pid,duration", true, ep_mesos_start,
     "?pid=N&duration=D: a profiling run of D (Mesos' syntax: 5mins, 600secs; default "
     "5mins, 1secs to 24hrs), one per process; its settings put back at its end", true},
    {"/memory-profiler/stop", "POST", true, "pid", true, ep_mesos_stop,
     "?pid=N: end the run under way now, with its dump", true},
    {"/memory-profiler/download/raw", "GET", false, "pid,id", true, ep_mesos_download_raw,
     "?pid=N[&id=RUN]: the latest finished run's dump (heap_v2, as jeprof reads it)", true},
    {"/memory-profiler/download/text", "GET", false, "pid,id", true, ep_mesos_download_text,
     "?pid=N[&id=RUN]: that dump's top, symbolized (jeprof --text)", true},
    {"/memory-profiler/download/graph", "GET", false, "pid,id", true,
     ep_mesos_download_graph, "?pid=N[&id=RUN]: that dump's call graph as SVG (Graphviz)", true},
    {"/memory-profiler/download/archive", "GET", false, "pid,id", true,
     ep_mesos_download_archive, "?pid=N[&id=RUN]: that run saved with the objects it is "
     "named from, as a tar.gz: 'tar xzf' it anywhere, then 'memprof DIR'", true},
};
const size_t serve_nroutes = sizeof serve_routes / sizeof *serve_routes;
