/* call_runner.c - owns call_runner_run: a batch of calls of one function
 * made by memprof's runner inside the process, in one remote call.  The
 * region is callback_region's (code read+execute, data read+write, never
 * both; unmapped before the thread runs again), so what holds for the
 * write callback holds here (docs/security.md). */
#include "attach/call_runner.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attach/arch/arch.h"
#include "attach/callback_region.h"

_Static_assert(sizeof(struct call_runner_entry) == sizeof(struct arch_run_entry) &&
               offsetof(struct call_runner_entry, ret) == offsetof(struct arch_run_entry, ret),
               "the runner's table layout");

static int run_in_region(struct remote_stop *s, const struct callback_region *r, uint64_t fn,
                         unsigned char *img, size_t len, size_t table, size_t n,
                         call_runner_fill_fn fill, void *arg, struct mp_error *err)
{
    uint64_t data = callback_region_opaque(r), ret;
    memset(img, 0, len);
    fill(img, data, arg);
    if (remote_stop_write(s, data, img, len, err) < 0)
        return -1;
    uint64_t args[3] = {fn, data + table, n};
    if (remote_stop_call_plain(s, r->region, args, 3, &ret, err) < 0)
        return -1;
    return remote_stop_read(s, data, img, len, err);
}

int call_runner_run(struct remote_stop *s, const struct target_libc *libc, uint64_t fn,
                    unsigned char *img, size_t len, size_t table, size_t n,
                    call_runner_fill_fn fill, void *arg, char *why, size_t whylen,
                    struct mp_error *err)
{
    const char *test = getenv("MEMPROF_TEST_NO_RUNNER");
    if (test && *test && strcmp(test, "0") != 0) {
        snprintf(why, whylen, "MEMPROF_TEST_NO_RUNNER is set");
        return 1;
    }
    if (!libc->mmap || !libc->mprotect || !libc->munmap) {
        snprintf(why, whylen, "process %d has no mmap(), mprotect() and munmap() in its "
                 "C library or executable", s->ctx->pid);
        return 1;
    }
    if (table + n * sizeof(struct call_runner_entry) > len)
        return mp_error_set(err, "a table of %zu calls does not fit in %zu bytes", n, len);
    size_t code_len;
    const uint8_t *code = arch_call_runner(&code_len);
    struct callback_region r;
    int rc = callback_region_map_code(s, libc, code, code_len, len, &r, why, whylen, err);
    if (rc == 0)
        rc = run_in_region(s, &r, fn, img, len, table, n, fill, arg, err);
    /* Unmapped whenever the thread can still take a call; after a fault
     * no further call is made and the region stays (said in err). */
    if (r.mapped && !s->gone && !s->at_signal_stop) {
        struct mp_error unmap_err;
        if (callback_region_unmap(s, libc, &r, rc < 0 ? &unmap_err : err) < 0 && rc >= 0)
            rc = -1;
    }
    if (rc < 0 && r.mapped)
        mp_error_prefix(err, "one private mapping of %llu bytes at 0x%llx stays in "
                        "process %d", (unsigned long long)r.size,
                        (unsigned long long)r.region, s->ctx->pid);
    return rc;
}
