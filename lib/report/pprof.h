/* pprof.h - export a heap profile in pprof's profile.proto format
 * (gzip-compressed), the format the wider tool ecosystem reads. */
#ifndef MEMPROF_PPROF_H
#define MEMPROF_PPROF_H

#include "lib/base/error.h"
#include "lib/profile/profile.h"
#include "lib/symbolize/symbolize.h"

#include <stdbool.h>
#include <stdint.h>

/* Write p, symbolized with sym (functions, files, lines, inlined frames),
 * to path as gzip-compressed profile.proto.  Sample types in Go's order:
 * alloc_objects/count and alloc_space/bytes when the profile has
 * cumulative counts, then inuse_objects/count and inuse_space/bytes
 * (a page-fault profile's: faults/count and faulted_space/bytes, period
 * type faults/count); period_type space/bytes, period = the sampling
 * interval; values are the
 * unsampled ones; allocator frames at the top of each stack are dropped as
 * in every other memprof view.  Ids run 1..N in order and every function
 * is named, so no reader needs a symbol server. */
int pprof_write(const struct profile *p, struct symbolizer *sym, const char *path,
                struct mp_error *err);

/* A label every sample carries (and a "key=value" comment): which
 * container and pod the process was in. */
struct pprof_label {
    const char *key, *value;
};

/* What an endpoint sets beyond the profile (memprof serve). */
struct pprof_options {
    bool allocs_first;          /* default sample type alloc_space when present
                                 * (Go's allocs profile), else inuse_space */
    int64_t time_nanos;         /* when it was taken (0: not said) */
    int64_t duration_nanos;     /* the span it covers (0: since the start) */
    const struct pprof_label *labels;
    size_t nlabels;
    const char *comment;        /* a line for pprof's comments (go tool pprof
                                 * -comments), NULL or "": none */
};

/* The same written to fd (which is not closed). */
int pprof_write_fd(const struct profile *p, struct symbolizer *sym, int fd,
                   const struct pprof_options *o, struct mp_error *err);

#endif
