/* jemalloc_stats_json.h - jemalloc's complete statistics exactly as
 * malloc_stats_print writes them with the "J" option, for the prompt's
 * `stats --json` and serve's /memory-profiler/statistics. */
#ifndef MEMPROF_JEMALLOC_STATS_JSON_H
#define MEMPROF_JEMALLOC_STATS_JSON_H

#include <stddef.h>

#include "session/session.h"

/* Why there are no statistics, where config.stats is false. */
extern const char jemalloc_no_stats_why[];

/* Capture them through a write callback placed in the process for one
 * stop (at most cap bytes), check they are whole JSON agreeing with
 * stats.allocated read in the same stop, and write them on s->out.  0,
 * or -1 after saying why. */
int jemalloc_stats_json(struct session *s, size_t cap);

#endif
