/* mallctl_call.c - turns struct mallctl_call into remote calls: lays out
 * each call's name, buffers and string pointer (never in the target's
 * allocator), calls <prefix>mallctl, and copies results back.  A batch of
 * calls runs in one stop (jemalloc_mallctl): a long one in one remote call
 * of memprof's call runner (attach/call_runner.c), the calls laid out in
 * its region, so that `stats`'s hundreds of reads cost one round trip
 * through ptrace, not one each; a short one, or one in a process that
 * refuses the runner's region, one call at a time on the stopped thread's
 * stack. */
#include "allocator/jemalloc/internal.h"
#include "attach/call_runner.h"

#include <stdlib.h>
#include <string.h>

#define MAX_SCRATCH (64 * 1024)

/* Offsets of one call's pieces inside its scratch block. */
struct call_layout {
    size_t name, oldlen, old, new_, str, strptr, size;
};

static size_t align8(size_t n)
{
    return (n + 7) & ~(size_t)7;
}

static void layout(const struct mallctl_call *c, struct call_layout *l)
{
    size_t off = 0;
    l->name = off;
    off = align8(off + strlen(c->name) + 1);
    l->oldlen = off;
    off += sizeof(uint64_t);
    l->old = off;
    off = align8(off + (c->old ? c->oldlen : 0));
    l->new_ = off;
    off = align8(off + (c->new ? c->newlen : 0));
    l->str = off;
    off = align8(off + (c->new_string && !c->new ? strlen(c->new_string) + 1 : 0));
    l->strptr = off;
    off += sizeof(uint64_t);
    l->size = off;
}

/* The block as it must appear in the target, built locally. */
static void fill(const struct mallctl_call *c, const struct call_layout *l,
                 uint64_t base, unsigned char *img)
{
    memset(img, 0, l->size);
    strcpy((char *)img + l->name, c->name);
    uint64_t oldlen = c->old ? c->oldlen : 0;
    memcpy(img + l->oldlen, &oldlen, sizeof oldlen);
    if (c->old)
        memcpy(img + l->old, c->old, c->oldlen);
    if (c->new)
        memcpy(img + l->new_, c->new, c->newlen);
    if (c->new_string && !c->new) {
        strcpy((char *)img + l->str, c->new_string);
        uint64_t p = base + l->str;
        memcpy(img + l->strptr, &p, sizeof p);
    }
}

static void call_args(const struct mallctl_call *c, const struct call_layout *l,
                      uint64_t base, uint64_t args[5])
{
    args[0] = base + l->name;
    args[1] = c->old ? base + l->old : 0;
    args[2] = c->old ? base + l->oldlen : 0;
    if (c->new) {
        args[3] = base + l->new_;
        args[4] = c->newlen;
    } else if (c->new_string) {
        args[3] = base + l->strptr;
        args[4] = sizeof(uint64_t);
    } else {
        args[3] = 0;
        args[4] = 0;
    }
}

/* What mallctl wrote, from a copy of the block starting at its oldlen. */
static void take_results(struct mallctl_call *c, const struct call_layout *l,
                         const unsigned char *at_oldlen)
{
    uint64_t oldlen;
    memcpy(&oldlen, at_oldlen, sizeof oldlen);
    size_t n = oldlen < c->oldlen ? (size_t)oldlen : c->oldlen;
    memcpy(c->old, at_oldlen + (l->old - l->oldlen), n);
    c->oldlen = n;
}

static int read_results(struct remote_stop *s, struct mallctl_call *c,
                        const struct call_layout *l, uint64_t base, struct mp_error *err)
{
    if (!c->old)
        return 0;
    /* oldlen and the old buffer are adjacent: one read for both. */
    size_t span = l->old - l->oldlen + c->oldlen;
    unsigned char *buf = malloc(span);
    if (!buf)
        return mp_error_set(err, "out of memory");
    int rc = remote_stop_read(s, base + l->oldlen, buf, span, err);
    if (rc == 0)
        take_results(c, l, buf);
    free(buf);
    return rc;
}

int mallctl_batch_call(struct remote_stop *s, const struct target *t,
                       struct mallctl_call *c, struct mp_error *err)
{
    const struct jemalloc_state *j = jemalloc_state(t);
    uint64_t fn = j->copies[j->selected].mallctl;
    struct call_layout l;
    layout(c, &l);
    if (l.size > MAX_SCRATCH)
        return mp_error_set(err, "mallctl %s: arguments of %zu bytes are too large "
                            "(at most %d)", c->name, l.size, MAX_SCRATCH);
    uint64_t base, sp;
    if (remote_stop_scratch(s, l.size, &base, &sp, err) < 0)
        return -1;
    unsigned char *img = malloc(l.size);
    if (!img)
        return mp_error_set(err, "out of memory");
    fill(c, &l, base, img);
    int rc = remote_stop_write(s, base, img, l.size, err);
    free(img);
    if (rc < 0)
        return -1;
    uint64_t args[5], ret;
    call_args(c, &l, base, args);
    if (remote_stop_call(s, fn, args, 5, sp, &ret, err) < 0)
        return -1;
    c->ret = (int)(uint32_t)ret;
    return read_results(s, c, &l, base, err);
}

/* A batch this long goes through the call runner (its region costs two
 * round trips more: map, unmap); shorter ones call one by one. */
#define RUNNER_MIN_CALLS 6
/* The most data a runner's region carries; a larger batch calls one by one. */
#define RUNNER_MAX_DATA (8u << 20)

struct batch {
    struct target *t;
    struct mallctl_call *calls;
    size_t n;
    struct call_layout *l;      /* the runner's layout: each call's block */
    size_t *off;                /* at this offset of the data */
    size_t table, len;          /* the entries' offset, the data's size */
};

/* The runner's data: each call's block as mallctl_batch_call lays it on
 * the stack, then the table of entries. */
static void runner_fill(unsigned char *img, uint64_t base, void *arg)
{
    const struct batch *b = arg;
    for (size_t i = 0; i < b->n; i++) {
        struct call_runner_entry e = {{0}, 0};
        fill(&b->calls[i], &b->l[i], base + b->off[i], img + b->off[i]);
        call_args(&b->calls[i], &b->l[i], base + b->off[i], e.args);
        memcpy(img + b->table + i * sizeof e, &e, sizeof e);
    }
}

/* The batch through the runner: 0, 1 when it cannot be (the calls are
 * then made one by one), -1 with err. */
static int batch_run(struct remote_stop *s, struct batch *b, struct mp_error *err)
{
    const struct jemalloc_state *j = jemalloc_state(b->t);
    unsigned char *img = malloc(b->len);
    if (!img)
        return 1;
    char why[512];
    int rc = call_runner_run(s, target_libc(b->t), j->copies[j->selected].mallctl, img,
                             b->len, b->table, b->n, runner_fill, b, why, sizeof why, err);
    for (size_t i = 0; rc == 0 && i < b->n; i++) {
        struct call_runner_entry e;
        memcpy(&e, img + b->table + i * sizeof e, sizeof e);
        b->calls[i].ret = (int)(uint32_t)e.ret;
        if (b->calls[i].old)
            take_results(&b->calls[i], &b->l[i], img + b->off[i] + b->l[i].oldlen);
    }
    free(img);
    if (rc < 0)
        mp_error_prefix(err, "%zu mallctl calls in one run", b->n);
    return rc;
}

static int batch_body(struct remote_stop *s, void *arg, struct mp_error *err)
{
    struct batch *b = arg;
    if (b->l) {
        int rc = batch_run(s, b, err);
        if (rc <= 0)
            return rc;
    }
    for (size_t i = 0; i < b->n; i++)
        if (mallctl_batch_call(s, b->t, &b->calls[i], err) < 0)
            return mp_error_prefix(err, "mallctl(\"%s\")", b->calls[i].name);
    return 0;
}

/* The runner's layout of a long batch, or nothing (b->l NULL): calls one
 * by one. */
static void batch_plan(struct batch *b)
{
    if (b->n < RUNNER_MIN_CALLS || !(b->l = calloc(b->n, sizeof *b->l)) ||
        !(b->off = calloc(b->n, sizeof *b->off))) {
        free(b->l);
        b->l = NULL;
        return;
    }
    size_t len = 0;
    for (size_t i = 0; i < b->n && len <= RUNNER_MAX_DATA; i++) {
        layout(&b->calls[i], &b->l[i]);
        b->off[i] = len;
        len += b->l[i].size;
    }
    b->table = len;
    b->len = len + b->n * sizeof(struct call_runner_entry);
    if (b->len > RUNNER_MAX_DATA) {
        free(b->l);
        free(b->off);
        b->l = NULL;
        b->off = NULL;
    }
}

int jemalloc_mallctl(struct target *t, struct mallctl_call *calls, size_t n,
                     struct mp_error *err)
{
    if (n == 0)
        return 0;
    struct batch b = {.t = t, .calls = calls, .n = n};
    batch_plan(&b);
    int rc = target_stop_run(t, batch_body, &b, err);
    free(b.l);
    free(b.off);
    return rc;
}
