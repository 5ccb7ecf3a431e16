/* heap_arenas.h - the allocator's heap arena by arena, for every front end
 * ('memory' at the prompt, its JSON "heap_arenas"): jemalloc's arenas (its
 * own figures, read in the summary's stop), glibc's arenas (malloc_info's
 * figures, each thread arena's resident bytes measured from the mappings
 * that hold it: session/glibc_arenas.c) and its mmapped chunks,
 * tcmalloc's page heap.  A breakdown of the heap, beside the categories
 * that add up to RSS (session/memory_account.h), not one of them. */
#ifndef MEMPROF_HEAP_ARENAS_H
#define MEMPROF_HEAP_ARENAS_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "allocator/stats.h"
#include "session/jemalloc_summary.h"
#include "session/session.h"

#define HEAP_UNKNOWN UINT64_MAX
#define HEAP_ARENA_EXTRA 4

struct heap_arena {
    char name[32];             /* "3", "0 (main)", "mmapped chunks", "page heap" */
    int64_t index;             /* the arena's number; -1: a row that is none */
    /* HEAP_UNKNOWN where the allocator does not say: */
    uint64_t in_use;           /* given to the program */
    uint64_t free;             /* free, held (resident or not) */
    uint64_t free_resident;    /* free and still resident (jemalloc's dirty
                                * and muzzy pages, tcmalloc's page heap) */
    uint64_t metadata;
    uint64_t resident;         /* measured (smaps) or the allocator's own */
    bool measured;             /* resident is the mappings' Rss */
    struct {
        const char *key;       /* for JSON: active, dirty, threads, heaps ... */
        uint64_t value;
        bool shown;            /* bytes the lines show too ("released") */
    } extra[HEAP_ARENA_EXTRA];
    size_t nextra;
};

struct heap_arenas {
    struct heap_arena *v;      /* largest first */
    size_t n, cap;
    unsigned arenas;           /* the allocator's arenas (may be more than read) */
    char note[512];            /* what could not be read or measured, or "" */
    bool measured;             /* every arena's resident bytes measured: */
    uint64_t resident, in_use; /* then their sums (the heap's category) */
    uint64_t thread_tops;      /* glibc: its thread arenas' top chunks (free,
                                * in no bin: malloc_trim leaves them), measured */
    unsigned nthread_tops;
    uint64_t thread_tops_over;  /* of which beyond the default trim threshold
                                 * each: what a fixed threshold could return */
    uint64_t *heap_starts;     /* malloc'd: mappings found to hold the heap
                                * (glibc's thread arenas' heaps), or NULL */
    size_t nheap_starts;
};

/* From what 'memory' read: jemalloc's arenas (detail), another
 * allocator's statistics (st: NULL when none).  glibc's also parses the
 * process's smaps its caller read (smaps: NULL when it could not be)
 * and reads its heaps' headers.  0, or -1 out of memory. */
int heap_arenas_jemalloc(struct heap_arenas *out, const struct jemalloc_summary *f,
                         const struct jemalloc_arenas *a);
int heap_arenas_tcmalloc(struct heap_arenas *out, const struct allocator_stats *st);
int heap_arenas_glibc(struct session *s, struct heap_arenas *out,
                      const struct allocator_stats *st, const char *smaps, size_t smaps_len);
void heap_arenas_free(struct heap_arenas *a);

/* A new row (zeroed, every figure unknown), or NULL out of memory. */
struct heap_arena *heap_arenas_add(struct heap_arenas *a, int64_t index, const char *name);
void heap_arena_extra(struct heap_arena *r, const char *key, uint64_t value);
/* One the lines show too (bytes). */
void heap_arena_extra_shown(struct heap_arena *r, const char *key, uint64_t value);
/* Largest first: by resident where known, else in use and free. */
void heap_arenas_sort(struct heap_arenas *a);
/* The row's weight, what the order is by. */
uint64_t heap_arena_bytes(const struct heap_arena *r);

/* Into o: heap_arenas [{arena, in_use, free, free_resident, metadata,
 * resident, resident_measured, ...extras}], heap_arenas_count, and
 * heap_arenas_note when there is one. */
void heap_arenas_json(json_object *o, const struct heap_arenas *a);

#endif
