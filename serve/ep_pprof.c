/* ep_pprof.c - the pprof endpoints continuous profilers pull (Parca,
 * Grafana Alloy's pyroscope.scrape) and go tool pprof reads:
 *   GET  /debug/pprof/heap?pid=N, /debug/pprof/allocs?pid=N: a dump of the
 *        process's own heap profiler (jemalloc with prof:true), nothing
 *        changed in the process;
 *   POST /debug/pprof/heap?pid=N&seconds=S (--allow-control): memprof's
 *        sampler put in for S seconds, the live heap it saw dumped, the
 *        sampler taken out: for glibc, tcmalloc and a jemalloc started
 *        without profiling.
 * gzip profile.proto as application/octet-stream (Alloy checks the type),
 * Go's sample-type order, time set; errors text/plain with X-Go-Pprof so
 * that go tool pprof shows them. */
#include "serve/endpoints.h"

#include <errno.h>
#include <stdio.h>
#include <time.h>

#include "lib/report/pprof.h"
#include "session/control.h"
#include "session/sampling.h"
#include "session/say.h"
#include "serve/worker.h"

struct pprof_job {
    bool allocs;                /* the allocs endpoint */
    bool sampler_run;           /* POST: the sampler may go in */
    unsigned seconds;
};

static int64_t wall_nanos(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void sleep_s(unsigned seconds)
{
    struct timespec left = {.tv_sec = seconds};
    while (nanosleep(&left, &left) < 0 && errno == EINTR)
        ;
}

/* A sampler run of j->seconds: the dump taken before it comes out (at the
 * session's end, as every front end's). */
static struct session_dump *sampler_profile(struct session *s, const struct pprof_job *j,
                                            int *status)
{
    if (!j->sampler_run) {
        say_error("process %d has no heap profiler running (its allocator is %s): a "
                  "profile needs memprof's sampler put in, which changes the process: "
                  "POST /debug/pprof/heap?pid=%d&seconds=N to an agent started with "
                  "--allow-control", (int)target_pid(s->target),
                  allocator_kind_name(s->alloc.kind), (int)target_pid(s->target));
        *status = 409;
        return NULL;
    }
    if (sampling_require(s) < 0) {
        *status = 422;
        return NULL;
    }
    if (sampling_run_on(s, sampler_lg_sample(s->sampler)) < 0)
        return NULL;
    sleep_s(j->seconds);
    return sampling_dump(s, NULL, NULL);
}

static int pprof_job_run(struct session *s, void *arg)
{
    const struct pprof_job *j = arg;
    int status = 500;
    struct session_dump *d;
    int64_t start = wall_nanos();
    if (sampling_applies(s)) {
        d = sampler_profile(s, j, &status);
    } else if (j->sampler_run) {
        say_error("process %d's jemalloc has its own heap profiler: GET "
                  "/debug/pprof/heap?pid=%d reads it", (int)target_pid(s->target),
                  (int)target_pid(s->target));
        return 409;
    } else if (control_profiling_possible(s) < 0) {
        return 409;
    } else {
        d = control_dump_take(s, NULL, NULL);
    }
    if (!d)
        return status;
    int64_t now = wall_nanos();
    struct pprof_options o = {.allocs_first = j->allocs, .time_nanos = now,
                              .duration_nanos = j->sampler_run ? now - start : 0};
    struct mp_error err;
    const struct profile *p = session_dump_profile(s, d);
    if (!p)
        return 500;
    session_check_inputs(s, d);
    fflush(s->out);
    if (pprof_write_fd(p, session_symbolizer(s), fileno(s->out), &o, &err) < 0) {
        say_error("%s", err.msg);
        return 500;
    }
    return 200;
}

static void serve_profile(const struct serve_request *rq, struct serve_reply *rp,
                          struct pprof_job *j)
{
    j->seconds = rq->seconds;
    if (j->sampler_run && !j->seconds) {
        reply_error(rp, 400, "a sampler run needs ?seconds=N: how long to sample");
        rp->go_pprof = true;
        return;
    }
    struct worker_reply wr;
    worker_run(rq->cfg, rq->pid, pprof_job_run, j, rq->cfg->request_timeout_s + j->seconds,
               &wr);
    reply_from_worker(rp, &wr, "application/octet-stream");
    rp->go_pprof = true;
}

void ep_pprof_heap(const struct serve_request *rq, struct serve_reply *rp)
{
    struct pprof_job j = {.allocs = false};
    serve_profile(rq, rp, &j);
}

void ep_pprof_allocs(const struct serve_request *rq, struct serve_reply *rp)
{
    struct pprof_job j = {.allocs = true};
    serve_profile(rq, rp, &j);
}

void ep_pprof_heap_run(const struct serve_request *rq, struct serve_reply *rp)
{
    struct pprof_job j = {.sampler_run = true};
    serve_profile(rq, rp, &j);
}
