/* jemalloc_purge.h - 'purge' for jemalloc, below the front ends: every
 * arena's (or one arena's) unused dirty and muzzy pages given back in one
 * stop, with the RSS (status) and stats.resident before and after. */
#ifndef MEMPROF_JEMALLOC_PURGE_H
#define MEMPROF_JEMALLOC_PURGE_H

#include <stdbool.h>
#include <stdint.h>

#include "session/jemalloc_summary.h"
#include "session/session.h"

struct jemalloc_purge {
    bool all;                  /* every arena, else arena */
    unsigned arena;
    bool rss_known;            /* VmRSS read before and after */
    uint64_t rss_before, rss_after;
    struct jemalloc_summary before, after;
    double pause_us;           /* the purge's stop */
};

/* arena: the arena's number as the user typed it, or NULL for every
 * arena.  0, or -1 with the error said (a bad or absent arena: nothing
 * purged). */
int jemalloc_purge_run(struct session *s, const char *arena, struct jemalloc_purge *p);

#endif
