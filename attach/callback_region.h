/* callback_region.h - a write callback `void cb(void *opaque, const char
 * *s)` of memprof's placed in the process for one stop, with the buffer it
 * appends to: for an allocator's printers (jemalloc's malloc_stats_print
 * and prof_recent dump), so that their output reaches neither the
 * process's stdout, stderr nor any file. */
#ifndef MEMPROF_CALLBACK_REGION_H
#define MEMPROF_CALLBACK_REGION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attach/remote_call.h"
#include "attach/target.h"

struct callback_region {
    uint64_t region, size;     /* the callback's address is region */
    bool mapped;               /* still mapped: unmap it */
};

/* Map a region with room for cap bytes of output and the callback in it.
 * 0; 1 when the process refused (why says so; r->mapped may be set); -1
 * with err when the call failed. */
int callback_region_map(struct remote_stop *s, const struct target_libc *libc, size_t cap,
                        struct callback_region *r, char *why, size_t whylen,
                        struct mp_error *err);
/* The same with other code of memprof's (at most a page) in the first
 * page, and cap bytes of read+write data after it (at
 * callback_region_opaque) for memprof to fill and read back. */
int callback_region_map_code(struct remote_stop *s, const struct target_libc *libc,
                             const uint8_t *code, size_t code_len, size_t cap,
                             struct callback_region *r, char *why, size_t whylen,
                             struct mp_error *err);
/* The opaque argument to pass with the callback (the buffer's head). */
uint64_t callback_region_opaque(const struct callback_region *r);
/* What the callback received (*data malloc'd, NUL-terminated), and whether
 * it went past cap and was cut. */
int callback_region_read(struct remote_stop *s, const struct callback_region *r,
                         char **data, size_t *len, bool *truncated, struct mp_error *err);
int callback_region_unmap(struct remote_stop *s, const struct target_libc *libc,
                          struct callback_region *r, struct mp_error *err);

#endif
