/* tcmalloc.h - gperftools' tcmalloc (libtcmalloc and libtcmalloc_minimal)
 * as memprof drives it: MallocExtension's numeric properties and text
 * report, and MallocExtension_ReleaseFreeMemory, each in one stop of one
 * thread that is not inside tcmalloc. */
#ifndef MEMPROF_TCMALLOC_H
#define MEMPROF_TCMALLOC_H

#include "allocator/stats.h"
#include "attach/mapped_object.h"
#include "attach/target.h"

/* The probe (allocator_open): finds MallocExtension's C functions in lib
 * (the object that owns malloc), hangs them on t, and adds the library's
 * code to unsafe: most of them take tcmalloc's page-heap lock, which is
 * not recursive. */
int tcmalloc_probe(struct target *t, const struct mapped_object *lib,
                   struct code_ranges *unsafe, struct mp_error *err);

int tcmalloc_stats(struct target *t, struct allocator_stats *st, struct mp_error *err);
int tcmalloc_purge(struct target *t, struct allocator_purge *p, struct mp_error *err);

#endif
