/* mallctl_call.c - turns struct mallctl_call into remote calls: lays out
 * each call's name, buffers and string pointer in scratch space on the
 * stopped thread's stack (never the target's allocator), calls
 * <prefix>mallctl, and copies results back.  Also the one runner of a
 * target's stops (target_stop_run), which keeps the pause statistics. */
#include "attach/target_internal.h"

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
    if (rc == 0) {
        uint64_t oldlen;
        memcpy(&oldlen, buf, sizeof oldlen);
        size_t n = oldlen < c->oldlen ? (size_t)oldlen : c->oldlen;
        memcpy(c->old, buf + (l->old - l->oldlen), n);
        c->oldlen = n;
    }
    free(buf);
    return rc;
}

int mallctl_batch_call(struct remote_stop *s, const struct target *t,
                       struct mallctl_call *c, struct mp_error *err)
{
    uint64_t fn = t->copies[t->selected].mallctl;
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

struct batch {
    struct target *t;
    struct mallctl_call *calls;
    size_t n;
};

static int batch_body(struct remote_stop *s, void *arg, struct mp_error *err)
{
    struct batch *b = arg;
    for (size_t i = 0; i < b->n; i++)
        if (mallctl_batch_call(s, b->t, &b->calls[i], err) < 0)
            return mp_error_prefix(err, "mallctl(\"%s\")", b->calls[i].name);
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median and p90 of the history ring (sorted copy: at most 1024 values,
 * computed after the thread was let go). */
static void update_percentiles(struct target *t)
{
    struct target_pause_stats *p = &t->pauses;
    size_t n = p->calls < PAUSE_HISTORY ? p->calls : PAUSE_HISTORY;
    double sorted[PAUSE_HISTORY];
    memcpy(sorted, t->pause_history, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, cmp_double);
    p->median_us = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    size_t k = (n * 9 + 9) / 10;    /* nearest rank: ceil(0.9 n) */
    p->p90_us = sorted[k - 1];
}

static void record_pause(struct target *t, const struct remote_report *rep)
{
    struct target_pause_stats *p = &t->pauses;
    t->pause_history[p->calls % PAUSE_HISTORY] = rep->pause_us;
    p->calls++;
    update_percentiles(t);
    p->last_us = rep->pause_us;
    if (rep->pause_us > p->max_us)
        p->max_us = rep->pause_us;
    p->last_tid = rep->tid;
    p->unsafe_retries += rep->unsafe_retries;
}

/* The first stop of a session runs the sweep before its body. */
#define SWEEP_MAX 64
struct swept_body {
    struct target *t;
    remote_body_fn body;
    void *arg;
    int fds[SWEEP_MAX];
    size_t nfds;
};

static int swept_body(struct remote_stop *s, void *arg, struct mp_error *err)
{
    struct swept_body *w = arg;
    dump_sweep_in_stop(w->t, s, w->fds, w->nfds);
    return w->body(s, w->arg, err);
}

int target_stop_run(struct target *t, remote_body_fn body, void *arg,
                    struct mp_error *err)
{
    struct swept_body w = { .t = t, .body = body, .arg = arg };
    if (!t->memfd_swept)
        w.nfds = dump_sweep_list(t, w.fds, SWEEP_MAX);
    struct remote_report rep;
    int rc = w.nfds ? remote_session(&t->ctx, swept_body, &w, &rep, err)
                    : remote_session(&t->ctx, body, arg, &rep, err);
    if (rep.tid)
        record_pause(t, &rep);
    if (rc == 0)
        t->memfd_swept = true;
    return rc;
}

int mallctl_batch_run(struct target *t, struct mallctl_call *calls, size_t n,
                      struct mp_error *err)
{
    struct batch b = { t, calls, n };
    return target_stop_run(t, batch_body, &b, err);
}
