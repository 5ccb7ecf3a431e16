/* sampling.h - the session's rules for memprof's own heap sampler
 * (allocator/sampler/): which processes get it instead of an allocator's
 * own profiler, and that it never outlives the session.  Every front end
 * goes through these. */
#ifndef MEMPROF_SAMPLING_H
#define MEMPROF_SAMPLING_H

#include <stdbool.h>

#include "allocator/sampler/sampler.h"
#include "session/session.h"

/* At attach: the sampler's state for the session, and a sampler a dead
 * memprof left in the process made inert (said on stderr). */
void sampling_attach(struct session *s);

/* Whether 'prof' and 'dump' go to memprof's sampler in this process: its
 * allocator is not jemalloc, or is a jemalloc started without profiling,
 * or a jemalloc 5.2 whose threads ran with profiling off
 * (s->prof_conf.own_profiler_blind). */
bool sampling_applies(struct session *s);

/* Why the sampler serves this process, where sampling_applies: "its
 * allocator is glibc ...", "its jemalloc was started without profiling
 * ...", or that its jemalloc 5.2 samples nothing from threads that ran
 * with profiling off. */
void sampling_reason(struct session *s, char *buf, size_t len);

/* Whether 'prof on' would put memprof's sampler in, the process's seccomp
 * filters aside: true, or false with why saying what stops it (why empty
 * where the sampler does not apply: jemalloc's own profiler serves 'prof').
 * The filters are judged by sampling_verdict. */
bool sampling_possible(struct session *s, char *why, size_t len);

/* What 'prof on' would do with the sampler, the seccomp filters included:
 * SAMPLING_NO with why, SAMPLING_YES, or (judge false, the process under a
 * filter not judged yet) SAMPLING_UNJUDGED with why saying so: it is judged
 * when the sampler is asked for.  judge true reads and judges the filters
 * as 'prof on' does (one stop, the verdict kept for 'prof on'); judge
 * false stops nothing.  why: SAMPLING_WHY_MAX bytes. */
enum sampling_verdict { SAMPLING_NO, SAMPLING_YES, SAMPLING_UNJUDGED };
#define SAMPLING_WHY_MAX 768
enum sampling_verdict sampling_verdict(struct session *s, bool judge, int *nfilters,
                                       char *why, size_t len);

/* The restart (or rebuild) that profiles a process memprof's sampler
 * cannot go into: "restart it with LD_PRELOAD=... MALLOC_CONF=...", or
 * what stands in its way (a static executable ignores LD_PRELOAD; a
 * secure-execution one ignores the environment). */
void sampling_restart_advice(struct session *s, char *buf, size_t len);

/* why (from sampling_possible) with the restart that would profile the
 * process: "WHY; to profile it, restart it with ...". */
void sampling_why_not_text(struct session *s, const char *why, char *buf, size_t len);

/* For a front end that refuses before it starts (serve answers 422): 0
 * when the sampler could go in, or -1 after saying why not ("no heap
 * profile of process N without a restart: ..."). */
int sampling_require(struct session *s);

/* 'prof on' / 'prof off'' / 'prof sample N' / 'prof reset' with the sampler;
 * each says what it did on s->out (json: the answer instead).  0, or -1
 * after saying why. */
int sampling_prof_on(struct session *s, bool json);
int sampling_prof_off(struct session *s, bool json);
int sampling_prof_rate(struct session *s, unsigned lg, bool json);
int sampling_prof_reset(struct session *s, bool json);

/* For a profiling run (session/profile_run.c), without a word on s->out:
 * the sampler on at rate lg (restarted when it was on at another rate),
 * or put back as it was before the run.  0, or -1 after saying why. */
int sampling_run_on(struct session *s, unsigned lg);
int sampling_run_restore(struct session *s, bool was_on, unsigned lg_before);

/* 'dump' with the sampler: the live samples as a profile, added to the
 * session (control_dump_add).  NULL after saying why. */
struct session_dump *sampling_dump(struct session *s, const char *name, const char *file);

/* Mappings alone, beside an allocator's own profiler (a jemalloc started
 * with prof:true, which cannot follow mmap): 'prof on --mappings' puts
 * memprof's sampler in for mmap, munmap, mremap, sbrk and brk only, 'prof off
 * --mappings' takes it out, 'dump --mappings' takes their profile.
 * Where the sampler serves 'prof' (sampling_applies) each refuses, saying
 * that 'prof on' and 'dump' follow mappings with the heap there.  0 (a
 * dump), or -1 (NULL) after saying why. */
int sampling_mappings_on(struct session *s, bool json);
int sampling_mappings_off(struct session *s, bool json);
struct session_dump *sampling_mappings_dump(struct session *s, const char *name,
                                            const char *file);

/* For 'info': "on, every 2^19 bytes", "off", "not in this process". */
void sampling_state_text(struct session *s, char *buf, size_t len);

/* At every end of a session with the process (detach, quit, end of input,
 * a failing batch, a terminal signal): the sampler comes out. */
void sampling_session_end(struct session *s);

#endif
