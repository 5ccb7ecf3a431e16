/* worker_pool.h - work in many processes at once (a /metrics scrape of
 * every process served): one worker per process, a bounded number under
 * way together, all within one deadline.  A worker not done by the
 * deadline is killed, which leaves its process as a killed memprof does
 * (worker.h), and its process is answered 504: a scrape gets its answer
 * in time rather than a late one. */
#ifndef MEMPROF_SERVE_WORKER_POOL_H
#define MEMPROF_SERVE_WORKER_POOL_H

#include <stddef.h>
#include <sys/types.h>

#include "serve/worker.h"

struct worker_pool_item {
    pid_t pid;                  /* in: the process */
    struct worker_reply reply;  /* out: its answer (504: past the deadline) */
    double seconds;             /* out: from its worker's start to its answer */
};

/* Run job in each item's process, at most parallel workers at once, every
 * one answered within budget_s of the call.  The items keep their order
 * whatever order the workers end in. */
void worker_pool_run(const struct serve_config *cfg, struct worker_pool_item *items, size_t n,
                     worker_job job, void *arg, unsigned parallel, double budget_s);

#endif
