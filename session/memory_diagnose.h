/* memory_diagnose.h - why a process's RSS is what it is: diagnoses, each
 * a cause with the bytes it explains and what to do about it, largest
 * first, made from figures already read (smaps by memory_account, the
 * allocator's own, the cgroup's, a scan of the huge pages) so that
 * 'memory' at the prompt and serve's /metrics say the same.  Only what is
 * measured is diagnosed: an unknown figure makes no diagnosis, and no
 * difference that would be negative is ever shown as 0.  The causes live
 * in diagnose_allocator.c (the allocators' free memory) and
 * diagnose_process.c (huge pages, stacks, growing mappings, the cgroup);
 * this file ranks and gives them out. */
#ifndef MEMPROF_MEMORY_DIAGNOSE_H
#define MEMPROF_MEMORY_DIAGNOSE_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "allocator/jemalloc/mallctl.h"
#include "allocator/stats.h"
#include "lib/proc/cgroup_memory.h"
#include "lib/proc/rss_account.h"
#include "session/jemalloc_summary.h"

/* A cause smaller than this is not worth a line. */
#define DIAGNOSE_MIN_BYTES ((uint64_t)1 << 20)
/* The cgroup is near its limit with less than this share of it left
 * (a quarter: room for a burst, not for a doubling). */
#define DIAGNOSE_CGROUP_NEAR 0.25
/* At most this many growing mappings are named. */
#define DIAGNOSE_GROWING_MAX 3

/* The stable keys (labels, JSON "key"), in a fixed order. */
#define DIAGNOSE_NKEYS 7
extern const char *const memory_diagnose_keys[DIAGNOSE_NKEYS];

struct memory_diagnosis {
    const char *key;       /* thp_inflation, jemalloc_unpurged, glibc_arenas_free,
                            * tcmalloc_pageheap_free, exited_thread_stacks,
                            * growing_mapping, cgroup_near_limit */
    uint64_t bytes;
    char cause[768];       /* may hold the target's text (paths): escape to show */
    char remedy[1024];
};

struct memory_diagnoses {
    struct memory_diagnosis *v;   /* largest bytes first */
    size_t n, cap;
};

/* jemalloc's settings that decide whether it purges while idle, read in
 * the same stop as its summary (memory_diagnose_jemalloc_calls). */
struct diagnose_jemalloc_settings {
    bool background_thread;
    ssize_t dirty_decay_ms, muzzy_decay_ms;
    struct mallctl_call calls[3];
};
#define DIAGNOSE_JEMALLOC_NCALLS 3
/* Point the calls at the settings: give set->calls (3) to jemalloc_summary_read. */
void memory_diagnose_jemalloc_calls(struct diagnose_jemalloc_settings *set);

/* The zero-filled 4 KiB pages inside huge pages (session/thp_scan.c). */
struct diagnose_thp {
    bool known;
    uint64_t huge;         /* AnonHugePages of the mappings scanned */
    uint64_t scanned;      /* bytes of fully resident 2 MiB blocks read */
    uint64_t zero;         /* of which in 4 KiB pages holding only zeros */
    bool capped;           /* stopped at the scan's bound */
    bool frames;           /* pagemap gave frame numbers (CAP_SYS_ADMIN): the
                            * blocks read were huge pages, not only wholly
                            * resident ones */
};

struct diagnose_input {
    const struct rss_account *rss;   /* NULL: smaps not read */
    unsigned threads, threads_with_sp;
    const char *allocator;           /* its name, for the text */
    const struct jemalloc_summary *je;               /* NULL: not jemalloc */
    const struct diagnose_jemalloc_settings *je_set; /* NULL: not read */
    const struct allocator_stats *other;             /* NULL: none */
    uint64_t glibc_thread_tops;      /* glibc: its thread arenas' top chunks (0: none
                                      * measured), which malloc_trim leaves */
    unsigned glibc_nthread_tops;
    uint64_t glibc_thread_tops_over; /* of which beyond 128 KiB each */
    bool tcmalloc;
    const struct cgroup_memory *cg;  /* NULL: not read */
    struct diagnose_thp thp;
    const char *thp_mode;            /* "always", "madvise", "never" or NULL */
    const struct rss_mapping *prev;  /* the previous read's mappings (NULL: none) */
    size_t nprev;
    double prev_seconds;             /* since it (0: not timed) */
    unsigned cpus;                   /* the CPUs the process may run on (0: unknown) */
};

/* Every diagnosis the input supports, largest first.  0, or -1 out of memory. */
int memory_diagnose(const struct diagnose_input *in, struct memory_diagnoses *out);
void memory_diagnoses_free(struct memory_diagnoses *d);

/* Into o: "diagnoses": [{cause, key, bytes, remedy}], largest first. */
void memory_diagnoses_json(json_object *o, const struct memory_diagnoses *d);
/* As text lines (the target's text escaped). */
void memory_diagnoses_text(FILE *out, const struct memory_diagnoses *d);
/* The bytes of every diagnosis with that key. */
uint64_t memory_diagnoses_key(const struct memory_diagnoses *d, const char *key);

/* ---- for the causes (diagnose_*.c) ---- */
struct memory_diagnosis *diagnose_add(struct memory_diagnoses *d, const char *key,
                                      uint64_t bytes);
int diagnose_thp(const struct diagnose_input *in, struct memory_diagnoses *d);
int diagnose_jemalloc_unpurged(const struct diagnose_input *in, struct memory_diagnoses *d);
int diagnose_glibc_arenas(const struct diagnose_input *in, struct memory_diagnoses *d);
int diagnose_tcmalloc(const struct diagnose_input *in, struct memory_diagnoses *d);
int diagnose_exited_stacks(const struct diagnose_input *in, struct memory_diagnoses *d);
int diagnose_growing(const struct diagnose_input *in, struct memory_diagnoses *d);
int diagnose_cgroup(const struct diagnose_input *in, struct memory_diagnoses *d);

#endif
