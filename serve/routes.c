/* routes.c - the table of memprof serve's endpoints: each row carries its
 * method, whether it changes a process, the query it takes and its help
 * (the index page and the man page say the same). */
#include "serve/endpoints.h"

const struct route serve_routes[] = {
    {"/", "GET", false, "", false, ep_index,
     "this page: the processes served and the endpoints"},
    {"/processes", "GET", false, "", false, ep_processes,
     "every process served, as JSON: pid, command, executable, user, allocator, "
     "profiling"},
    {"/metrics", "GET", false, "pid", false, ep_metrics,
     "Prometheus metrics (text format 0.0.4) of every process served, or of ?pid=N"},
    {"/debug/pprof/heap", "GET", false, "pid", true, ep_pprof_heap,
     "?pid=N: the live heap from the process's own profiler (jemalloc prof:true) as a "
     "pprof profile (gzip profile.proto); nothing changed in the process"},
    {"/debug/pprof/heap", "POST", true, "pid,seconds", true, ep_pprof_heap_run,
     "?pid=N&seconds=S: memprof's sampler put in for S seconds, the live heap it saw, "
     "the sampler taken out (glibc, tcmalloc, jemalloc without prof:true)"},
    {"/debug/pprof/allocs", "GET", false, "pid", true, ep_pprof_allocs,
     "?pid=N: the same profile as heap, alloc_space the default where the process "
     "counts allocations (prof_accum)"},
};
const size_t serve_nroutes = sizeof serve_routes / sizeof *serve_routes;
