/* stats.h - what an allocator says of its memory, the same for every
 * allocator: the statistics and the result of a purge that
 * allocator/allocator.h hands to the front ends and each implementation
 * (allocator/glibc, allocator/tcmalloc) fills. */
#ifndef MEMPROF_ALLOCATOR_STATS_H
#define MEMPROF_ALLOCATOR_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/mallinfo/glibc_info.h"

/* One figure an allocator reports, in bytes or a count. */
struct allocator_figure {
    char key[64];               /* stable name (--json), e.g. "generic.heap_size" */
    uint64_t value;
};
#define ALLOCATOR_FIGURES_MAX 32

/* An allocator's statistics, read in one stop.  The summary's four
 * figures are what every allocator can say (UINT64_MAX: not known). */
struct allocator_stats {
    uint64_t in_use;            /* given to the program and not freed */
    uint64_t free_held;         /* free, kept by the allocator (a purge may
                                 * give part of it back) */
    uint64_t from_system;       /* obtained from the system and still held */
    uint64_t mmapped;           /* of which in blocks mmap()ed one by one */
    struct allocator_figure fig[ALLOCATOR_FIGURES_MAX];
    size_t nfig;                /* the allocator's own figures, in order */
    struct glibc_malloc_info glibc; /* glibc: per arena (malloc_info) */
    bool have_glibc;
    char *text;                 /* the allocator's own report, malloc'd
                                 * (tcmalloc's MallocExtension_GetStats), or NULL */
};
void allocator_stats_free(struct allocator_stats *st);
/* Append one of the allocator's own figures (beyond the max: dropped). */
void allocator_stats_add(struct allocator_stats *st, const char *key, uint64_t value);

/* A purge: the allocator returns the free memory it holds to the system,
 * in one stop, with its own figures before and after. */
struct allocator_purge {
    uint64_t free_before, free_after;  /* free_held (UINT64_MAX: unknown) */
    uint64_t system_before, system_after; /* from_system */
    long ret;                   /* the purge function's answer
                                 * (malloc_trim: 1 when memory was released) */
};

#endif
