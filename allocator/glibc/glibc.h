/* glibc.h - glibc's malloc as memprof drives it: its statistics through
 * malloc_info() and a purge through malloc_trim(0), each in one stop of one
 * thread that is not inside the allocator. */
#ifndef MEMPROF_GLIBC_H
#define MEMPROF_GLIBC_H

#include "allocator/stats.h"
#include "attach/mapped_object.h"
#include "attach/target.h"

/* The probe (allocator_open): finds malloc_info, malloc_trim and the stdio
 * functions that carry malloc_info's output in libc (the object that owns
 * malloc), hangs them on t, and adds to unsafe the code of the stdio
 * functions that hold libc's list of open FILEs.  glibc's own allocator
 * functions are already refused by the engine (attach/unwind_check.c). */
int glibc_probe(struct target *t, const struct mapped_object *libc,
                struct code_ranges *unsafe, struct mp_error *err);

int glibc_stats(struct target *t, struct allocator_stats *st, struct mp_error *err);
int glibc_purge(struct target *t, struct allocator_purge *p, struct mp_error *err);

#endif
