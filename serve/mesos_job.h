/* mesos_job.h - the work of Mesos' /memory-profiler endpoints that runs
 * in a worker attached to the process (serve/worker.h): each a worker_job
 * writing its answer on s->out and returning its HTTP status. */
#ifndef MEMPROF_SERVE_MESOS_JOB_H
#define MEMPROF_SERVE_MESOS_JOB_H

#include <json-c/json.h>
#include <limits.h>

#include "serve/mesos_runs.h"
#include "session/session.h"

/* /state's document without the process's part: pid, and under
 * memory_profiler the run under way and the latest finished one. */
json_object *mesos_state_doc(pid_t pid, const struct mesos_run_state *st);
/* The whole /state: arg is the process's struct mesos_run_state. */
int mesos_state_job(struct session *s, void *arg);

/* jemalloc's malloc_stats_print JSON (409 for another allocator). */
int mesos_statistics_job(struct session *s, void *arg);

/* A run: arg is its struct mesos_run_arg.  Answers {id, remaining_seconds,
 * message} once profiling is on (worker_answer), then follows the run to
 * its end (its duration, a stop, or the agent gone), puts the settings
 * back, and leaves its files in dir (mesos_runs.h names them). */
struct mesos_run_arg {
    unsigned id;
    double duration;            /* seconds */
    char dir[PATH_MAX];
};
int mesos_run_job(struct session *s, void *arg);

#endif
