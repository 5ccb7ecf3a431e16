/* capture.c - owns jemalloc_capture: jemalloc output that goes to a write
 * callback (malloc_stats_print, a dump mallctl such as
 * experimental.prof_recent.alloc_dump) brought back without the process's
 * stdout, stderr or any file: in one stop of one thread, memprof's write
 * callback is placed in the process (attach/callback_region.c), the calls
 * run with it, and the output comes back. */
#include "allocator/jemalloc/internal.h"
#include "attach/callback_region.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The most memprof asks the process to map for one capture. */
#define CAPTURE_MAX (1024ull * 1024 * 1024)

struct capture_run {
    struct target *t;
    struct jemalloc_capture *c;
    const struct target_libc *libc;
    struct callback_region region;
};

/* The capture itself, between map and unmap. */
static int capture_in_region(struct remote_stop *s, struct capture_run *r,
                             struct mp_error *err)
{
    struct jemalloc_capture *c = r->c;
    uint64_t cb = r->region.region, opaque = callback_region_opaque(&r->region);
    for (size_t i = 0; i < c->ncalls; i++)
        if (mallctl_batch_call(s, r->t, &c->calls[i], err) < 0)
            return mp_error_prefix(err, "mallctl(\"%s\")", c->calls[i].name);
    if (c->dump_name) {
        uint64_t packet[2] = {cb, opaque};
        struct mallctl_call dump = {.name = c->dump_name, .new = packet,
                                    .newlen = sizeof packet};
        if (mallctl_batch_call(s, r->t, &dump, err) < 0)
            return mp_error_prefix(err, "mallctl(\"%s\")", c->dump_name);
        c->dump_ret = dump.ret;
    } else {
        const struct jemalloc_copy *je = jemalloc_copy(r->t, jemalloc_selected(r->t));
        size_t olen = strlen(c->print_opts) + 1;
        uint64_t base, sp, ret;
        if (remote_stop_scratch(s, olen, &base, &sp, err) < 0 ||
            remote_stop_write(s, base, c->print_opts, olen, err) < 0)
            return -1;
        uint64_t args[3] = {cb, opaque, base};
        if (remote_stop_call(s, je->malloc_stats_print, args, 3, sp, &ret, err) < 0)
            return -1;
    }
    for (size_t i = 0; i < c->nafter; i++)
        if (mallctl_batch_call(s, r->t, &c->after[i], err) < 0)
            return mp_error_prefix(err, "mallctl(\"%s\")", c->after[i].name);
    return callback_region_read(s, &r->region, &c->data, &c->len, &c->truncated, err);
}

static int capture_body(struct remote_stop *s, void *arg, struct mp_error *err)
{
    struct capture_run *r = arg;
    int rc = callback_region_map(s, r->libc, r->c->cap, &r->region, r->c->why,
                                 sizeof r->c->why, err);
    if (rc == 0)
        rc = capture_in_region(s, r, err);
    else if (rc > 0)
        rc = 0;             /* refused: c->why says so; unmap what was mapped */
    /* Unmapped whenever the thread can still take a call; after a fault
     * no further call is made and the region stays (said in err). */
    if (r->region.mapped && !s->gone && !s->at_signal_stop) {
        struct mp_error unmap_err;
        if (callback_region_unmap(s, r->libc, &r->region, rc < 0 ? &unmap_err : err) < 0 &&
            rc == 0)
            rc = -1;
    }
    return rc;
}

int jemalloc_capture(struct target *t, struct jemalloc_capture *c, struct mp_error *err)
{
    c->data = NULL;
    c->len = 0;
    c->truncated = false;
    c->dump_ret = 0;
    c->why[0] = 0;
    const struct jemalloc_copy *je = jemalloc_copy(t, jemalloc_selected(t));
    if (!c->dump_name && !je->malloc_stats_print)
        return mp_error_set(err, "the jemalloc in process %d (%s) has no %smalloc_stats_print "
                            "symbol: its statistics cannot be printed", target_pid(t), je->object,
                            je->prefix);
    const struct target_libc *libc = target_libc(t);
    if (!libc->mmap || !libc->mprotect || !libc->munmap)
        return mp_error_set(err, "process %d has no mmap(), mprotect() and munmap() in its "
                            "C library or executable: memprof cannot place a write callback "
                            "in it", target_pid(t));
    if (c->cap == 0 || c->cap > CAPTURE_MAX)
        return mp_error_set(err, "a capture of %zu bytes: give from 1 byte to 1 GiB", c->cap);
    struct capture_run r = {.t = t, .c = c, .libc = libc};
    int rc = target_stop_run(t, capture_body, &r, err);
    if (rc < 0 && r.region.mapped)
        mp_error_prefix(err, "one private mapping of %llu bytes at 0x%llx stays in "
                        "process %d", (unsigned long long)r.region.size,
                        (unsigned long long)r.region.region, target_pid(t));
    if (rc < 0) {
        free(c->data);
        c->data = NULL;
        return -1;
    }
    if (c->why[0])
        return mp_error_set(err, "%s", c->why);
    return 0;
}
