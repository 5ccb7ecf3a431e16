/* profile_run.h - profiling runs: profiling turned on for a while, a dump
 * every so often (and, with --peak, one at each new high-water mark), the
 * process's profiling settings put back at the end; the dumps form a
 * series named after the run.
 *
 * A run is driven by ticks rather than a thread of its own, so that every
 * call into the process still comes from the one thread that owns the
 * ptrace session: the prompt wakes up for the run's next event, batch
 * input and `sleep` tick between lines, `profile wait` ticks until the
 * end.  One run at a time per session (and so per process: one session
 * per process, attach/session_lock.c). */
#ifndef MEMPROF_PROFILE_RUN_H
#define MEMPROF_PROFILE_RUN_H

#include <stdbool.h>
#include <time.h>

#include "lib/base/error.h"
#include "session/session.h"

enum run_state {
    RUN_RUNNING,
    RUN_COMPLETED,         /* its duration ran out */
    RUN_STOPPED,           /* profile stop, Ctrl-C, end of the session */
    RUN_PROCESS_ENDED,     /* the process exited or exec'd */
    RUN_FAILED,            /* dumps kept failing */
};

struct profile_run_options {
    double duration;       /* seconds; 0: until 'profile stop' */
    double every;          /* seconds between dumps */
    bool has_sample;
    unsigned sample;       /* lg_sample to run at */
    bool peak, force;
    const char *name;      /* NULL: run1, run2... */
    const char *save_dir;  /* write the series there when the run ends */
};

struct profile_run {
    char name[48];
    enum run_state state;
    char why[160];             /* how it ended */
    int pid;
    struct profile_run_options o;
    char *save_dir;
    double t_start, t_end, next_dump;   /* CLOCK_MONOTONIC seconds */
    double t_stopped;          /* when it ended (CLOCK_MONOTONIC) */
    bool finished;             /* profile_run_finish has run */
    time_t wall_start, wall_end;
    bool active_before;
    size_t lg_before;
    bool gdump_before;
    char prefix_before[1024];  /* opt.prof_prefix, put back into prof.prefix */
    bool peak_armed;           /* prof.gdump/prof.prefix are set by the run */
    unsigned ndumps, npeaks, failures;
    char latest[64];           /* the latest dump's name */
    char pending_peak[64];     /* the peak dump kept since the last periodic
                                * one: a higher one replaces it */
};

/* Durations: "500ms", "20s", "2m" or "2min", "1h", "1d", or plain seconds
 * (fractions allowed); more than 0 and at most 30 days.  0 or -1 with err. */
int profile_parse_duration(const char *text, double *seconds, struct mp_error *err);

int profile_run_start(struct session *s, const struct profile_run_options *o);
bool profile_run_running(const struct session *s);
/* Do what is due (a dump, the end); a no-op without a running run. */
void profile_run_tick(struct session *s);
/* Seconds until the running run's next event (>= 0), or -1 without one. */
double profile_run_next(const struct session *s);
/* End the running run now: a last dump when final_dump (and the process
 * lives), its settings put back, the series saved when asked.  state:
 * RUN_STOPPED and the like; why: how it ended. */
void profile_run_finish(struct session *s, enum run_state state, const char *why,
                        bool final_dump);
/* At the end of the session (main): a run still running is ended, with a
 * last dump unless a signal ends memprof. */
void profile_run_session_end(struct session *s, bool signalled);
void profile_run_free(struct profile_run *r);
const char *profile_run_state_name(enum run_state st);

/* ---- run directories (session/run_dir.c) ---- */

/* Write a series as a run directory: each dump's bytes exactly as jemalloc
 * wrote them (NAME.heap, with NAME.heap.buildids), and manifest.json.  dir
 * is made 0700, or must be an empty directory.  0, or -1 after saying why. */
int profile_run_save(struct session *s, const char *series, const char *dir);
/* Whether dir holds a saved run (a manifest.json). */
bool profile_run_dir_is_run(const char *dir);
/* Load a saved run back as its series.  0, or -1 after saying why. */
int profile_run_load(struct session *s, const char *dir);

#endif
