/* jemalloc_stats_view.h - 'stats' summary for jemalloc as figures, below
 * the front ends: the reads of one stop (jemalloc_stats_summary.h) turned
 * into totals, the first ARENAS_SHOWN initialized arenas, and the size
 * classes with a current count. */
#ifndef MEMPROF_JEMALLOC_STATS_VIEW_H
#define MEMPROF_JEMALLOC_STATS_VIEW_H

#include <stddef.h>
#include <stdint.h>

#include "session/jemalloc_stats_summary.h"
#include "session/session.h"

struct jemalloc_stats_arena {
    unsigned index, threads;
    uint64_t allocated, dirty, muzzy;      /* bytes */
    int64_t dirty_decay_ms, muzzy_decay_ms;
};

struct jemalloc_stats_class {
    uint64_t size, count;
};

struct jemalloc_stats_view {
    uint64_t allocated, active, metadata, resident, mapped, retained;
    uint64_t dirty, muzzy;                 /* bytes, every arena */
    unsigned narenas;                      /* arenas.narenas */
    unsigned arenas_read;                  /* arenas 0 to arenas_read - 1 were read */
    struct jemalloc_stats_arena arenas[ARENAS_SHOWN];
    size_t n;                              /* of them initialized, in index order */
    struct jemalloc_stats_class *small, *large;   /* malloc'd, counts above 0 */
    size_t nsmall, nlarge;
    uint64_t large_beyond;                 /* large bytes in classes above LARGE_LISTED_MAX */
};

/* One stop after an epoch.  0, or -1 with the error said. */
int jemalloc_stats_view_read(struct session *s, struct jemalloc_stats_view *v);
void jemalloc_stats_view_free(struct jemalloc_stats_view *v);

#endif
