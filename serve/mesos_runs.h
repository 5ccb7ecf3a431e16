/* mesos_runs.h - the agent's record of Mesos-style profiling runs
 * (/memory-profiler/start and stop): at most one run per process, each
 * done by a worker that stays attached for the run's length
 * (serve/mesos_job.c); the files of each process's latest finished run
 * (its dump, the text and the call graph) in a directory of the agent's
 * own, made at start (0700) and removed at its end.  Nothing in it is ever
 * named by a request: a run is found by pid and id.  Thread-safe: the
 * HTTP threads and the agent's main thread share it. */
#ifndef MEMPROF_SERVE_MESOS_RUNS_H
#define MEMPROF_SERVE_MESOS_RUNS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "lib/base/error.h"
#include "serve/worker.h"

/* The files of a finished run, in its directory. */
#define MESOS_RAW "raw.heap"
#define MESOS_TEXT "text.txt"
#define MESOS_GRAPH "graph.svg"
#define MESOS_GRAPH_NOTE "graph.note" /* why there is no graph.svg */
#define MESOS_OUTCOME "outcome.json"  /* how the run ended */
#define MESOS_ARCHIVE "run.tar.gz"    /* the run saved with its objects */
#define MESOS_ARCHIVE_PART "run.tar.gz.part"   /* ...while it is written */
#define MESOS_ARCHIVE_NOTE "archive.note"   /* why there is no run.tar.gz */
/* The largest file of a run served (a dump of a process with a very large
 * number of stacks; an archive with large objects). */
#define MESOS_DOWNLOAD_MAX (512u << 20)

/* Runs under way at once, over every process. */
#define MESOS_MAX_RUNS 32

/* Make the agent's directory.  0, or -1 with err. */
int mesos_runs_init(struct mp_error *err);
/* At the agent's end: every run under way asked to end (its settings put
 * back by its worker) within timeout_s each, then the files removed. */
void mesos_runs_end(unsigned timeout_s);
/* Now and then from the main thread: ended workers reaped, a worker past
 * its run's end by more than grace_s ended. */
void mesos_runs_tick(unsigned grace_s);

/* Reserve pid's run: 0 with *id and its directory in dir (made); or the
 * HTTP status with why: 409 (a run is under way), 503 (too many runs, or
 * no directory). */
int mesos_runs_begin(pid_t pid, double duration, unsigned *id, char *dir, size_t len,
                     char *why, size_t why_len);
/* The run's worker answered: h (taken over) is the worker going on, or
 * NULL when it did not start (the reservation and directory dropped). */
void mesos_runs_started(pid_t pid, unsigned id, struct worker_handle *h);
/* End pid's run under way within timeout_s: its id in *id and the
 * worker's status; 0 when none is under way (*id 0), 409 when it is
 * still starting or another request is ending it. */
int mesos_runs_stop(pid_t pid, unsigned timeout_s, unsigned *id);

/* What is known of pid's runs. */
struct mesos_run_state {
    unsigned active_id;         /* the run under way, 0: none */
    double remaining_s;         /* its time left */
    unsigned last_id;           /* the latest finished run, 0: none */
    char last_dir[PATH_MAX];    /* its directory */
};
void mesos_runs_state(pid_t pid, struct mesos_run_state *st);
/* Seconds left in pid's run under way, or -1 without one: the other
 * endpoints answer 503 meanwhile (its worker holds the process). */
double mesos_runs_remaining(pid_t pid, unsigned *id);

#endif
