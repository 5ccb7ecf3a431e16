/* glibc_heaps.h - glibc's thread arenas tied to the mappings that hold
 * them, so that each arena's resident bytes are measured (smaps' Rss), not
 * taken from its own figure.
 *
 * glibc (malloc/arena.c) gives each thread arena heaps of its own: each
 * an anonymous mapping aligned to HEAP_MAX_SIZE (2 * DEFAULT_MMAP_THRESHOLD_MAX:
 * 64 MiB on 64-bit) whose first bytes are a heap_info {ar_ptr, prev, size,
 * mprotect_size}; the arena's own state lies in its first heap, right
 * after that header.  The arena's system_mem, which malloc_info prints as
 * its "current" system bytes, is the sum of its heaps' size.  The main
 * arena grows the brk heap ([heap]).
 *
 * The headers are read from a process memprof does not trust, so nothing
 * here follows a pointer: heaps are grouped by the ar_ptr they claim, a
 * group counts only when one of its heaps holds that address (its first
 * heap), and a group is tied to malloc_info's arena of the same system
 * bytes (groups and arenas of equal bytes in their order).  Pure. */
#ifndef MEMPROF_GLIBC_HEAPS_H
#define MEMPROF_GLIBC_HEAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/mallinfo/glibc_info.h"

/* HEAP_MAX_SIZE by default on 64-bit (glibc's arena.c); a glibc built with
 * another, or given hugetlb heaps (glibc.malloc.hugetlb=2), leaves its
 * arenas unmatched, which is said. */
#define GLIBC_HEAP_ALIGN (64ull << 20)

/* One aligned anonymous mapping and the header read at its start. */
struct glibc_heap {
    uint64_t start, end, rss;  /* the mapping (smaps) */
    bool read;                 /* the header below was read */
    uint64_t ar_ptr, size;     /* heap_info's */
};

/* What was measured of arena i of malloc_info (main arena: 0). */
struct glibc_arena_rss {
    bool measured;             /* resident below is the mappings' Rss */
    uint64_t resident;
    unsigned heaps;            /* mappings (0 for the main arena's brk heap) */
};

struct glibc_heaps_result {
    struct glibc_arena_rss *arena;   /* malloc'd, mi->narenas of them */
    uint64_t unmatched_rss;    /* heaps tied to no arena of malloc_info */
    unsigned unmatched;        /* such groups */
    uint64_t *starts;          /* malloc'd: the start of every mapping found
                                * to be a heap (its group holds its arena) */
    size_t nstarts;
};

/* h[0..n) the aligned mappings (any order); brk_rss the [heap]'s Rss
 * (have_brk: there is one).  0, or -1 out of memory. */
int glibc_heaps_match(const struct glibc_heap *h, size_t n, const struct glibc_malloc_info *mi,
                      bool have_brk, uint64_t brk_rss, struct glibc_heaps_result *out);
void glibc_heaps_result_free(struct glibc_heaps_result *r);

#endif
