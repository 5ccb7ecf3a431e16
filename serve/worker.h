/* worker.h - each piece of work memprof serve does in a process runs in a
 * worker: a child of the agent, forked for it, that attaches, works and
 * exits.  A worker's crash, hang or leak never reaches the agent; its
 * memory ends with it; a worker killed at its time limit leaves the
 * process as a killed memprof does (its stop restores itself, the session
 * lock goes with it). */
#ifndef MEMPROF_SERVE_WORKER_H
#define MEMPROF_SERVE_WORKER_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "serve/config.h"
#include "session/session.h"

/* What a worker answers: an HTTP status, the body it wrote, and what it
 * said on stderr (its errors, one sentence each). */
struct worker_reply {
    int status;
    char *body;                 /* malloc'd, NUL-terminated */
    size_t len;
    char *said;                 /* malloc'd, NUL-terminated */
};

/* The work, run in the child with s attached to pid (when pid > 0): it
 * writes its answer on s->out and returns the HTTP status (200, or an
 * error's, with the reason said through say_error). */
typedef int (*worker_job)(struct session *s, void *arg);

/* Run job in a worker, attached to pid first unless pid is 0, for at most
 * timeout_s seconds.  Once attached, the worker checks the process against
 * cfg's rules again: the router checked the pid before the fork, when it
 * could still have been reused.  Statuses the job does not give: 404 (no
 * such process), 503 (another memprof holds it), 403 (not permitted, or
 * not served), 504 (time limit: the worker was killed), 500 (the worker
 * died).  0, or -1 when no worker could be started (r->said says why). */
int worker_run(const struct serve_config *cfg, pid_t pid, worker_job job, void *arg,
               unsigned timeout_s, struct worker_reply *r);
void worker_reply_free(struct worker_reply *r);

/* worker_run in two halves, for the agent to have many workers under way
 * at once (worker_pool.h): a worker forked for pid, and its answer once
 * it has ended -- waited for at most timeout_s, killed past that (0: now,
 * unless it has already ended). */
struct worker_spawned {
    pid_t child;                /* the worker */
    pid_t pid;                  /* the process it works in */
    int fds[2];                 /* its answer files: body, what it said */
};
/* 0, or -1 when no worker could be started (r says why). */
int worker_spawn(const struct serve_config *cfg, pid_t pid, worker_job job, void *arg,
                 struct worker_spawned *w, struct worker_reply *r);
void worker_collect(struct worker_spawned *w, unsigned timeout_s, struct worker_reply *r);

/* A worker that answers and goes on (a Mesos profiling run, for its
 * length): the agent keeps its pid and its end of a control pipe. */
struct worker_handle {
    pid_t pid;                  /* 0: none, or ended and reaped */
    int control_fd;             /* a byte asks the job to end; closed, too */
};

/* Like worker_run, but the job answers with worker_answer and goes on:
 * r is its answer, given within timeout_s.  0 with h set when it answered
 * 200 and goes on; -1 otherwise (the worker is gone, r says why). */
int worker_start(const struct serve_config *cfg, pid_t pid, worker_job job, void *arg,
                 unsigned timeout_s, struct worker_reply *r, struct worker_handle *h);
/* In the worker, from the job: what it wrote on s->out and said so far is
 * its answer, with status; the agent replies with it.  Returns the control
 * descriptor the job then watches: readable when the agent asks it to end
 * (a byte) or is gone (end of file).  Whatever the job writes or says
 * after goes nowhere. */
int worker_answer(struct session *s, int status);
/* In the agent: whether the worker has ended (reaped then; *status its
 * HTTP status), without waiting. */
bool worker_ended(struct worker_handle *h, int *status);
/* In the agent: ask the worker to end (a byte on the control pipe) and
 * wait for it at most timeout_s, killed after that.  Its status: its
 * job's, 504 when it was killed at the limit, 500 when it died. */
int worker_finish(struct worker_handle *h, unsigned timeout_s);

/* The signals that end the agent (SIGTERM, SIGINT, SIGHUP): it takes them
 * with sigwait, and its workers keep them blocked. */
void worker_stop_signals(sigset_t *set);

#endif
