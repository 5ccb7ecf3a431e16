/* internal.h - what the files of allocator/jemalloc/ share and nothing
 * else sees: the state jemalloc hangs on a target, and one mallctl call
 * made on a thread already stopped. */
#ifndef MEMPROF_JEMALLOC_INTERNAL_H
#define MEMPROF_JEMALLOC_INTERNAL_H

#include "allocator/jemalloc/jemalloc.h"
#include "attach/remote_call.h"

struct jemalloc_state {
    struct jemalloc_copy *copies;
    size_t ncopies, selected;
    unsigned dump_seq;          /* names of dumps in the private directory */
    char *memfd_why;            /* why dumps cannot go through a memfd (once
                                 * that failed it fails again), or NULL */
};

/* The state of a target jemalloc_open opened. */
struct jemalloc_state *jemalloc_state(const struct target *t);

/* One mallctl call on an already stopped thread (mallctl_call.c). */
int mallctl_batch_call(struct remote_stop *s, const struct target *t,
                       struct mallctl_call *c, struct mp_error *err);

#endif
