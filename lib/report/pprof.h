/* pprof.h - export a heap profile in pprof's profile.proto format
 * (gzip-compressed), the format the wider tool ecosystem reads. */
#ifndef MEMPROF_PPROF_H
#define MEMPROF_PPROF_H

#include "lib/base/error.h"
#include "lib/profile/profile.h"
#include "lib/symbolize/symbolize.h"

/* Write p, symbolized with sym (functions, files, lines, inlined frames),
 * to path as gzip-compressed profile.proto.  Sample types inuse_objects/
 * count and inuse_space/bytes (plus alloc_* when the profile has
 * cumulative counts), period_type space/bytes, period = the sampling
 * interval; values are the unsampled ones; allocator frames at the top of
 * each stack are dropped as in every other memprof view. */
int pprof_write(const struct profile *p, struct symbolizer *sym, const char *path,
                struct mp_error *err);

#endif
