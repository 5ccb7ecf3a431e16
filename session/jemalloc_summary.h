/* jemalloc_summary.h - jemalloc's whole-process figures, read in one stop
 * after an epoch (so that they are current), the same for every front
 * end: the prompt's stats, memory and purge, and serve's /metrics. */
#ifndef MEMPROF_JEMALLOC_SUMMARY_H
#define MEMPROF_JEMALLOC_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "allocator/jemalloc/jemalloc.h"
#include "session/session.h"

/* The stats.* names of the figures, in the struct's order (allocated ..
 * retained), for a reader that plans its own calls (stats' tables). */
#define JEMALLOC_SUMMARY_NFIG 6
extern const char *const jemalloc_summary_names[JEMALLOC_SUMMARY_NFIG];

struct jemalloc_summary {
    bool stats;                /* config.stats: the stats.* below are real */
    uint64_t allocated, active, metadata, resident, mapped, retained;
    bool pages;                /* the dirty and muzzy bytes below are known */
    uint64_t dirty, muzzy;     /* free pages not purged / purged lazily, all
                                * arenas, in bytes */
    unsigned narenas;
};

/* Per arena, where it is cheap (/metrics): the dirty and muzzy bytes of
 * the initialized arenas among the first JEMALLOC_SUMMARY_MAX_ARENAS
 * (jemalloc can have thousands: their sum is the summary's dirty and
 * muzzy). */
#define JEMALLOC_SUMMARY_MAX_ARENAS 64
struct jemalloc_arena_pages {
    unsigned index;
    uint64_t dirty, muzzy;     /* bytes */
    /* read by jemalloc_summary_read_detail only (else 0): */
    bool detail;               /* every figure below answered */
    unsigned threads;          /* stats.arenas.<i>.nthreads */
    uint64_t allocated;        /* small.allocated + large.allocated */
    uint64_t active;           /* pactive, in bytes */
    uint64_t metadata;         /* base + internal */
    uint64_t resident;         /* jemalloc's upper bound (untouched pages count) */
};
struct jemalloc_arenas {
    size_t n;                  /* arenas read, in index order */
    struct jemalloc_arena_pages a[JEMALLOC_SUMMARY_MAX_ARENAS];
};

/* extra calls (NULL: none) run first in the same stop (a purge, whose
 * effect the figures then show), their answers copied back; then epoch
 * and the figures.  0, or -1 after saying why. */
int jemalloc_summary_read(struct session *s, struct mallctl_call *extra, size_t nextra,
                          struct jemalloc_summary *f);
/* The same, with each arena's pages read in that stop too. */
int jemalloc_summary_read_arenas(struct session *s, struct mallctl_call *extra, size_t nextra,
                                 struct jemalloc_summary *f, struct jemalloc_arenas *arenas);
/* The same, each arena's other figures too (threads, allocated, active,
 * metadata, resident): 'memory''s heap by arena. */
int jemalloc_summary_read_detail(struct session *s, struct mallctl_call *extra, size_t nextra,
                                 struct jemalloc_summary *f, struct jemalloc_arenas *arenas);

#endif
