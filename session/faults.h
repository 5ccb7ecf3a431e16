/* faults.h - `faults SECONDS`: what makes a process's RSS grow, by call
 * stack.  Its page faults sampled by the kernel for a while
 * (attach/perf_faults.c: no stop, nothing written into the process), each
 * sample's copied user stack walked with memprof's own unwind rows
 * (lib/elf/cfi_walk.c over lib/elf/cfi_rows.c's rows), the faulting
 * address matched to its mapping, and the whole added to the session as
 * a dump that top, flame, diff, trend, report and pprof read like any
 * other.
 *
 * The dump is a "heap profile: ... @ page_faults" profile (not sampled,
 * lib/profile/profile.h): each stack's count is the faults its samples
 * stand for (the sum of their periods) and its bytes that count times the
 * page size: the memory first touched there, as RSS grows by it; every
 * view and the pprof export name them faults.  A fault is not net growth
 * (copy-on-write, page cache, a page freed later all fault too) and a
 * transparent huge page counts as one page. */
#ifndef MEMPROF_FAULTS_H
#define MEMPROF_FAULTS_H

#include <stdbool.h>
#include <stdint.h>

#include "attach/perf_faults.h"
#include "session/session.h"

/* A sample every this many faults of a thread, unless told otherwise. */
#define FAULTS_PERIOD_DEFAULT 8u

struct faults_options {
    double seconds;             /* how long to sample */
    uint64_t period;            /* a sample every N faults; 0: by frequency */
    unsigned freq;              /* samples per second per thread (period 0) */
    const char *name;           /* the dump's name, NULL: faultsN */
    bool (*stop)(void);         /* the front end's "stop now" (Ctrl-C), or NULL */
};

/* Where the faults were: the mappings that took the most. */
#define FAULTS_MAPPINGS 8
struct faults_mapping {
    char what[160];             /* "[heap]", "anonymous", "thread stack", a file's
                                 * path (from the process: escape to print) */
    uint64_t faults;
};

struct faults_report {
    struct perf_faults_counts counts;
    double seconds;             /* sampled for */
    uint64_t faults;            /* the faults the samples stand for */
    uint64_t page_bytes;
    uint64_t truncated;         /* samples whose walk stopped early */
    uint64_t dropped;           /* samples beyond the bounds (not in the dump) */
    struct faults_mapping maps[FAULTS_MAPPINGS];
    unsigned nmaps;
    uint64_t other_faults;      /* in mappings beyond those */
    uint64_t unmapped_faults;   /* at addresses unmapped by the end */
    struct session_dump *dump;     /* the dump added (a pointer into s->dumps) */
};

/* Sample the attached process's faults for o->seconds and add the dump.
 * 0, or -1 after saying (say_error) what went wrong and what to do. */
int faults_take(struct session *s, const struct faults_options *o, struct faults_report *r);

/* The same in steps, for a profiling run (session/profile_run.c): open
 * (NULL after saying why), read the rings often enough that they do not
 * fill (every 100 ms is plenty), and take a dump of the faults since the
 * last one (0, or -1 after saying why). */
struct faults_sampler;
struct faults_sampler *faults_sampler_open(struct session *s, uint64_t period, unsigned freq);
void faults_sampler_read(struct faults_sampler *fs, int timeout_ms);
int faults_sampler_dump(struct session *s, struct faults_sampler *fs, const char *name,
                        struct faults_report *r);
void faults_sampler_close(struct faults_sampler *fs);

#endif
