/* glibc_info.h - what glibc's malloc_info(0, fp) says about a process's
 * heap: each arena's free chunks, system memory and address space, and the
 * totals, read from the XML it prints (glibc 2.36's format, version 1).
 *
 * The text comes from a process memprof does not trust, so the parser reads
 * only the len bytes it is given (no NUL needed), refuses numbers beyond
 * 64 bits, nesting deeper than GLIBC_INFO_MAX_DEPTH and more than
 * GLIBC_INFO_MAX_ARENAS arenas, and skips elements and attributes it does
 * not know.  It checks the form, not the arithmetic: a process may print
 * totals that are not the sum of its arenas. */
#ifndef MEMPROF_GLIBC_INFO_H
#define MEMPROF_GLIBC_INFO_H

#include <stddef.h>
#include <stdint.h>

#include "lib/base/error.h"

#define GLIBC_INFO_MAX_ARENAS (1u << 16)
#define GLIBC_INFO_MAX_DEPTH 16

/* One <heap nr="N"> element: an arena.  Free chunks are counted in fast
 * bins and in the rest (the other bins and the top chunk). */
struct glibc_arena_info {
    unsigned nr;
    uint64_t fast_count, fast_bytes, rest_count, rest_bytes;
    uint64_t system_current, system_max;   /* bytes the arena got from the system */
    uint64_t aspace_total, aspace_mprotect;
};

struct glibc_malloc_info {
    struct glibc_arena_info *arenas;       /* malloc'd, in the order printed */
    size_t narenas;
    uint64_t fast_count, fast_bytes, rest_count, rest_bytes;   /* totals */
    uint64_t mmap_count, mmap_bytes;       /* blocks mmapped on their own */
    uint64_t system_current, system_max, aspace_total, aspace_mprotect;
};

/* Parse malloc_info's output in text[0..len).  Returns 0, or -1 with err
 * saying what is wrong and at which byte offset (out is then empty). */
int glibc_malloc_info_parse(const char *text, size_t len, struct glibc_malloc_info *out,
                            struct mp_error *err);

void glibc_malloc_info_free(struct glibc_malloc_info *mi);

/* An arena's free bytes: fast bins and the rest (saturating, as a hostile
 * process may print numbers whose sum does not fit). */
static inline uint64_t glibc_arena_free_bytes(const struct glibc_arena_info *a)
{
    uint64_t sum = a->fast_bytes + a->rest_bytes;
    return sum < a->fast_bytes ? UINT64_MAX : sum;
}

#endif
