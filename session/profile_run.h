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

/* Durations: "500ms", "20s", "2m" or "2min", "1h", "1d", or plain seconds
 * (fractions allowed); more than 0 and at most 30 days.  0 or -1 with err. */
int profile_parse_duration(const char *text, double *seconds, struct mp_error *err);

int profile_run_start(struct session *s, const struct profile_run_options *o);
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

/* ---- run directories (session/run_dir.c) ---- */

/* Write a series as a run directory: each dump's bytes exactly as jemalloc
 * wrote them (NAME.heap, with NAME.heap.buildids), and manifest.json.  dir
 * is made 0700, or must be an empty directory.  0, or -1 after saying why. */
int profile_run_save(struct session *s, const char *series, const char *dir);
/* Whether dir holds a saved run (a manifest.json). */
bool profile_run_dir_is_run(const char *dir);
/* Keep in dir/.build-id the objects the dumps idx[0..n) are named from
 * (session/run_objects.c), saying what was kept and what was left out.
 * 0, or -1 when dir cannot be written at all. */
int profile_run_keep_objects(struct session *s, const size_t *idx, size_t n, const char *dir);
/* Load a saved run back as its series.  0, or -1 after saying why. */
int profile_run_load(struct session *s, const char *dir);

#endif
