/* ep_pprof.c - the pprof endpoints continuous profilers pull (Parca,
 * Grafana Alloy's pyroscope.scrape) and go tool pprof reads:
 *   GET  /debug/pprof/heap?pid=N, /debug/pprof/allocs?pid=N: a dump of the
 *        process's own heap profiler (jemalloc with prof:true), nothing
 *        changed in the process; with &seconds=S, as Go's net/http/pprof,
 *        the delta of two dumps S seconds apart (the process runs free
 *        between them: nothing stopped, only memprof's session lock held);
 *   POST /debug/pprof/heap?pid=N&seconds=S (--allow-control): memprof's
 *        sampler put in for S seconds, the live heap it saw dumped, the
 *        sampler taken out: for glibc, tcmalloc and a jemalloc started
 *        without profiling.
 * gzip profile.proto as application/octet-stream (Alloy checks the type),
 * Go's sample-type order, time set, every sample labelled with the
 * process's container_id, pod_uid and qos where its cgroup names them (as
 * /metrics' series); errors text/plain with X-Go-Pprof so that go tool
 * pprof shows them. */
#include "serve/endpoints.h"

#include <errno.h>
#include <stdio.h>
#include <time.h>

#include "lib/profile/profile_delta.h"
#include "lib/report/pprof.h"
#include "session/control.h"
#include "session/sampling.h"
#include "session/say.h"
#include "serve/worker.h"

struct pprof_job {
    bool allocs;                /* the allocs endpoint */
    bool sampler_run;           /* POST: the sampler may go in */
    unsigned seconds;           /* POST: the run's length; GET: the delta's */
    struct process_label pl[PROCESS_LABELS_MAX];    /* its container and pod */
    struct pprof_label labels[PROCESS_LABELS_MAX];  /* the same, for the writer */
    size_t nlabels;
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
        char why[768];
        sampling_reason(s, why, sizeof why);
        say_error("process %d has no heap profiler running (%s): a "
                  "profile needs memprof's sampler put in, which changes the process: "
                  "POST /debug/pprof/heap?pid=%d&seconds=N to an agent started with "
                  "--allow-control", (int)target_pid(s->target), why,
                  (int)target_pid(s->target));
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

/* The profile of the process's own profiler: one dump, or with seconds
 * the delta of two taken that far apart; *owned is set when the profile
 * is the delta, the caller's to free.  NULL after saying why. */
static const struct profile *own_profile(struct session *s, unsigned seconds,
                                         struct session_dump **last, struct profile **owned)
{
    *owned = NULL;
    struct session_dump *d0 = control_dump_take(s, NULL, NULL);
    if (!d0 || !seconds) {
        *last = d0;
        return d0 ? session_dump_profile(s, d0) : NULL;
    }
    sleep_s(seconds);
    struct session_dump *d1 = control_dump_take(s, NULL, NULL);
    const struct profile *p0 = session_dump_profile(s, d0);
    const struct profile *p1 = d1 ? session_dump_profile(s, d1) : NULL;
    *last = d1;
    if (!p0 || !p1)
        return NULL;
    struct mp_error err;
    if (!(*owned = profile_delta(p0, p1, &err)))
        say_error("%s", err.msg);
    return *owned;
}

static int pprof_job_run(struct session *s, void *arg)
{
    const struct pprof_job *j = arg;
    int status = 500;
    struct session_dump *d = NULL;
    struct profile *delta = NULL;
    const struct profile *p;
    int64_t start = wall_nanos();
    if (sampling_applies(s)) {
        d = sampler_profile(s, j, &status);
        p = d ? session_dump_profile(s, d) : NULL;
    } else if (j->sampler_run) {
        say_error("process %d's jemalloc has its own heap profiler: GET "
                  "/debug/pprof/heap?pid=%d reads it", (int)target_pid(s->target),
                  (int)target_pid(s->target));
        return 409;
    } else if (control_profiling_possible(s) < 0) {
        return 409;
    } else {
        p = own_profile(s, j->seconds, &d, &delta);
    }
    if (!p)
        return status;
    int64_t now = wall_nanos();
    struct pprof_options o = {.allocs_first = j->allocs, .time_nanos = now,
                              .duration_nanos = j->seconds ? now - start : 0,
                              .labels = j->labels, .nlabels = j->nlabels};
    struct mp_error err;
    session_check_inputs(s, d);
    fflush(s->out);
    int rc = pprof_write_fd(p, session_symbolizer(s), fileno(s->out), &o, &err);
    profile_free(delta);
    if (rc < 0) {
        say_error("%s", err.msg);
        return 500;
    }
    return 200;
}

static void serve_profile(const struct serve_request *rq, struct serve_reply *rp,
                          struct pprof_job *j)
{
    j->seconds = rq->seconds;
    j->nlabels = process_container_labels(&rq->target.ct, j->pl);
    for (size_t i = 0; i < j->nlabels; i++)
        j->labels[i] = (struct pprof_label){j->pl[i].key, j->pl[i].value};
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
