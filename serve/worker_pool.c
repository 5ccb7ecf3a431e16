/* worker_pool.c - many workers under way at once, within one deadline
 * (worker_pool.h).  The agent's thread for the request polls the pidfds of
 * the workers under way, starts the next as one ends, and at the deadline
 * kills those still working.  A worker with no pidfd (descriptors short)
 * is waited for alone, bounded by the time left. */
#include "serve/worker_pool.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <time.h>
#include <unistd.h>

#include "lib/base/mono_clock.h"

/* The most workers under way at once, whatever --scrape-parallel says. */
#define POOL_MAX 256

struct running {
    struct worker_spawned w;
    size_t item;
    int pidfd;
    double started;
};

/* A reply replaced by a one-sentence 504 (its body dropped). */
static void late(struct worker_pool_item *it, double budget_s, bool started)
{
    worker_reply_free(&it->reply);
    it->reply.status = 504;
    it->reply.body = strdup("");
    char *m = NULL;
    if (asprintf(&m, "memprof: process %d was %s within the scrape's %.1f s%s\n",
                 (int)it->pid, started ? "not read" : "not reached", budget_s,
                 started ? ": its worker was ended (a stop under way restores its thread "
                 "itself)" : " (more processes than the agent reads in that time: "
                 "--scrape-parallel, or a longer scrape_timeout)") < 0)
        m = NULL;
    it->reply.said = m ? m : strdup("");
}

/* Collect a worker (killed first when late) into its item. */
static void finish(struct running *r, struct worker_pool_item *items, bool killed,
                   double budget_s)
{
    struct worker_pool_item *it = &items[r->item];
    if (r->pidfd >= 0)
        close(r->pidfd);
    worker_collect(&r->w, 0, &it->reply);
    it->seconds = mono_clock_s() - r->started;
    if (killed && it->reply.status == 504)
        late(it, budget_s, true);
}

/* Start the worker for item i in slot r: true when it is under way, false
 * when it could not start (its item then holds why). */
static bool start(const struct serve_config *cfg, struct worker_pool_item *items, size_t i,
                  worker_job job, void *arg, struct running *r)
{
    r->item = i;
    r->started = mono_clock_s();
    if (worker_spawn(cfg, items[i].pid, job, arg, &r->w, &items[i].reply) < 0) {
        items[i].seconds = mono_clock_s() - r->started;
        return false;
    }
    r->pidfd = pidfd_open(r->w.child, 0);
    return true;
}

/* Wait alone for a worker that has no pidfd, within the time left. */
static void wait_alone(struct running *r, struct worker_pool_item *items, double deadline,
                       double budget_s)
{
    double left = deadline - mono_clock_s();
    struct worker_pool_item *it = &items[r->item];
    worker_collect(&r->w, left > 0 ? (unsigned)ceil(left) : 0, &it->reply);
    it->seconds = mono_clock_s() - r->started;
    if (it->reply.status == 504)
        late(it, budget_s, true);
}

void worker_pool_run(const struct serve_config *cfg, struct worker_pool_item *items, size_t n,
                     worker_job job, void *arg, unsigned parallel, double budget_s)
{
    if (parallel < 1)
        parallel = 1;
    if (parallel > POOL_MAX)
        parallel = POOL_MAX;
    struct running run[POOL_MAX];
    struct pollfd pfd[POOL_MAX];
    size_t nrun = 0, next = 0;
    double deadline = mono_clock_s() + budget_s;
    for (size_t i = 0; i < n; i++)
        items[i].reply = (struct worker_reply){0};
    for (;;) {
        while (nrun < parallel && next < n && mono_clock_s() < deadline) {
            if (!start(cfg, items, next++, job, arg, &run[nrun]))
                continue;
            if (run[nrun].pidfd < 0)
                wait_alone(&run[nrun], items, deadline, budget_s);
            else
                nrun++;
        }
        if (nrun == 0)
            break;
        double left = deadline - mono_clock_s();
        if (left <= 0) {
            for (size_t k = 0; k < nrun; k++)
                finish(&run[k], items, true, budget_s);
            nrun = 0;
            break;
        }
        for (size_t k = 0; k < nrun; k++)
            pfd[k] = (struct pollfd){.fd = run[k].pidfd, .events = POLLIN};
        int got = poll(pfd, nrun, (int)ceil(left * 1000));
        if (got < 0 && errno != EINTR)
            deadline = mono_clock_s();     /* cannot poll: they end now */
        for (size_t k = nrun; k-- > 0;) {
            if (!(pfd[k].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            finish(&run[k], items, false, budget_s);
            run[k] = run[--nrun];
        }
    }
    for (; next < n; next++)    /* the deadline came first */
        late(&items[next], budget_s, false);
}
