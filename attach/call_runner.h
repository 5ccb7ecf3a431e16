/* call_runner.h - many calls of one function in one remote call: memprof's
 * call runner (attach/arch) placed in a code region of its own for one
 * stop, fed a table of arguments memprof lays out in the region's data.
 * One round trip through ptrace instead of one per call. */
#ifndef MEMPROF_CALL_RUNNER_H
#define MEMPROF_CALL_RUNNER_H

#include <stddef.h>
#include <stdint.h>

#include "attach/remote_call.h"
#include "attach/target.h"

/* One call in the table: fn(args[0], ..., args[5]); ret is its result. */
struct call_runner_entry {
    uint64_t args[6];
    uint64_t ret;
};

/* Lays the data out in img (len bytes, zeroed), as it must read at base
 * in the process: the table of entries and whatever they point to. */
typedef void (*call_runner_fill_fn)(unsigned char *img, uint64_t base, void *arg);

/* Map the runner and len bytes of data, fill them (fill), call fn once
 * per entry of the n-entry table at offset table in the data, read the
 * data back into img, unmap.  0 (img holds the data after the calls,
 * entries' ret set); 1 when the process refused the region (why says
 * so; nothing was called, nothing stays mapped: the caller makes the
 * calls one by one); -1 with err when a call failed. */
int call_runner_run(struct remote_stop *s, const struct target_libc *libc, uint64_t fn,
                    unsigned char *img, size_t len, size_t table, size_t n,
                    call_runner_fill_fn fill, void *arg, char *why, size_t whylen,
                    struct mp_error *err);

#endif
