/* jemalloc_stats_summary.h - the reads behind 'stats' (its summary):
 * jemalloc's size classes, read once per process, then the totals, the
 * first ARENAS_SHOWN arenas, every bin's and listed large class's counts,
 * all in one stop after an epoch.  The front end shows them
 * (repl/cmd_memory.c). */
#ifndef MEMPROF_JEMALLOC_STATS_SUMMARY_H
#define MEMPROF_JEMALLOC_STATS_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "allocator/jemalloc/mallctl.h"
#include "session/session.h"

/* A growing list of reads made in one stop, each into an 8-byte slot
 * (every value read here fits: little-endian, zeroed first). */
struct read_slot {
    char name[64];
    uint64_t val;
};

struct reads {
    struct read_slot *slots;
    size_t n, cap;
    struct mallctl_call *v;    /* the calls, made by reads_link */
    bool oom;
};

void reads_free(struct reads *r);

/* jemalloc's size classes: constants of its build, read once per process
 * (a stop of their own, before the first summary). */
struct size_classes {
    pid_t pid;
    uint64_t mallctl;          /* which copy of jemalloc */
    unsigned nbins, nlextents;
    unsigned narenas;          /* as last seen: the arenas a summary reads */
    uint64_t page;
    uint64_t *bin_size, *lextent_size;
};

/* Large classes listed one by one: up to 64 GiB (each class is one more
 * call in the stop; the rest, rarely used, is one remainder taken from
 * large.allocated). */
#define LARGE_LISTED_MAX (1ull << 36)

#define ARENAS_SHOWN 64

/* Indices of the summary's reads. */
struct summary_at {
    size_t epoch, totals, pdirty, pmuzzy, large_all, narenas;
    size_t arena0;             /* ARENA_READS per arena from here */
    size_t bins0, large0;
    unsigned arenas, large_listed;
};
#define ARENA_READS 7

/* The summary's reads into r (at: where each figure is; cl: the size
 * classes they count), in one stop after an epoch.  0, or -1 with the
 * error said.  r is freed by reads_free either way. */
int jemalloc_stats_summary_read(struct session *s, struct reads *r, struct summary_at *at,
                                const struct size_classes **cl);

#endif
