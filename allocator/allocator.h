/* allocator.h - the one interface every front end uses to drive a
 * process's allocator, whichever it is: which allocator serves the
 * program's malloc (allocator_open), its statistics and a purge of the free
 * memory it holds.  Profiling is jemalloc's alone today and goes through
 * allocator/jemalloc/jemalloc.h; the implementations (allocator/jemalloc,
 * allocator/glibc, allocator/tcmalloc) hang their state on the target. */
#ifndef MEMPROF_ALLOCATOR_H
#define MEMPROF_ALLOCATOR_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "attach/target.h"
#include "lib/base/error.h"
#include "allocator/stats.h"

enum allocator_kind {
    ALLOCATOR_UNKNOWN,          /* a malloc memprof does not know */
    ALLOCATOR_JEMALLOC,
    ALLOCATOR_GLIBC,
    ALLOCATOR_TCMALLOC,         /* gperftools' libtcmalloc (with its heap profiler) */
    ALLOCATOR_TCMALLOC_MINIMAL, /* gperftools' libtcmalloc_minimal */
    ALLOCATOR_MIMALLOC,
};

/* Who serves the process's memory. */
struct allocator_id {
    enum allocator_kind kind;   /* the allocator memprof drives */
    enum allocator_kind malloc_kind; /* the one the program's malloc() reaches:
                                 * glibc beside a prefixed jemalloc (Rust's
                                 * _rjem_, Arrow's je_arrow_), else kind */
    char malloc_object[PATH_MAX]; /* the object defining that malloc ("": none
                                 * found, a stripped static program) */
    bool malloc_linked_in;      /* it is the executable itself */
};

/* "jemalloc", "glibc malloc", "gperftools tcmalloc", ... */
const char *allocator_kind_name(enum allocator_kind k);
/* Stable key for --json: "jemalloc", "glibc", "tcmalloc", ... */
const char *allocator_kind_key(enum allocator_kind k);

/* Open process pid (target_open_with) and find which allocator serves it:
 * jemalloc when the process holds a copy memprof can drive (then the
 * jemalloc API applies), else the owner of malloc.  A process whose
 * allocator memprof does not know is opened too, id->kind saying so;
 * only what cannot be opened at all (or a stripped jemalloc whose symbols
 * are missing) fails, with err saying why. */
struct target *allocator_open(pid_t pid, const struct target_options *opts,
                              struct allocator_id *id, struct mp_error *err);

/* What memprof can do with an allocator, for refusals that say what can. */
bool allocator_has_stats(enum allocator_kind k);
bool allocator_has_purge(enum allocator_kind k);
/* Why it cannot (a sentence), when it cannot. */
const char *allocator_why_no_stats(enum allocator_kind k);

/* Statistics of a process that does not use jemalloc (for jemalloc, see
 * jemalloc.h): 0, or -1 with err saying why (for an allocator without
 * them, what it lacks). */
int allocator_stats(struct target *t, const struct allocator_id *id,
                    struct allocator_stats *st, struct mp_error *err);

int allocator_purge(struct target *t, const struct allocator_id *id,
                    struct allocator_purge *p, struct mp_error *err);

#endif
