/* jemalloc_stats_view.c - see session/jemalloc_stats_view.h. */
#include "session/jemalloc_stats_view.h"

#include <stdlib.h>
#include <string.h>

#include "session/say.h"

static uint64_t minus(uint64_t a, uint64_t b)
{
    return a > b ? a - b : 0;
}

static void totals(struct jemalloc_stats_view *v, const struct reads *r,
                   const struct summary_at *at, const struct size_classes *cl)
{
    const struct read_slot *t = &r->slots[at->totals];
    v->allocated = t[0].val;
    v->active = t[1].val;
    v->metadata = t[2].val;
    v->resident = t[3].val;
    v->mapped = t[4].val;
    v->retained = t[5].val;
    v->dirty = r->slots[at->pdirty].val * cl->page;
    v->muzzy = r->slots[at->pmuzzy].val * cl->page;
    v->narenas = (unsigned)r->slots[at->narenas].val;
    v->arenas_read = at->arenas;
}

/* The initialized arenas among those read (ARENA_READS each). */
static void arenas(struct jemalloc_stats_view *v, const struct reads *r,
                   const struct summary_at *at, const struct size_classes *cl)
{
    for (unsigned i = 0; i < at->arenas && i < ARENAS_SHOWN; i++) {
        size_t at0 = at->arena0 + (size_t)i * ARENA_READS;
        const struct read_slot *a = &r->slots[at0];
        if (r->v[at0].ret || i >= v->narenas)
            continue;          /* not initialized */
        v->arenas[v->n++] = (struct jemalloc_stats_arena){
            .index = i, .threads = (uint32_t)a[0].val, .allocated = a[1].val + a[2].val,
            .dirty = a[3].val * cl->page, .muzzy = a[4].val * cl->page,
            .dirty_decay_ms = (int64_t)a[5].val, .muzzy_decay_ms = (int64_t)a[6].val};
    }
}

/* The classes with a current count, into *out (n of them). */
static int classes(const uint64_t *sizes, const struct read_slot *counts, unsigned n,
                   struct jemalloc_stats_class **out, size_t *nout)
{
    *out = calloc(n ? n : 1, sizeof **out);
    if (!*out)
        return -1;
    for (unsigned j = 0; j < n; j++)
        if (counts[j].val)
            (*out)[(*nout)++] = (struct jemalloc_stats_class){sizes[j], counts[j].val};
    return 0;
}

static int view(struct jemalloc_stats_view *v, const struct reads *r,
                const struct summary_at *at, const struct size_classes *cl)
{
    totals(v, r, at, cl);
    arenas(v, r, at, cl);
    uint64_t listed = 0;
    for (unsigned j = 0; j < at->large_listed; j++)
        listed += r->slots[at->large0 + j].val * cl->lextent_size[j];
    v->large_beyond = minus(r->slots[at->large_all].val, listed);
    if (classes(cl->bin_size, &r->slots[at->bins0], cl->nbins, &v->small, &v->nsmall) ||
        classes(cl->lextent_size, &r->slots[at->large0], at->large_listed, &v->large,
                &v->nlarge)) {
        say_error("out of memory");
        return -1;
    }
    return 0;
}

int jemalloc_stats_view_read(struct session *s, struct jemalloc_stats_view *v)
{
    memset(v, 0, sizeof *v);
    struct reads r = {0};
    struct summary_at at;
    const struct size_classes *cl;
    int rc = jemalloc_stats_summary_read(s, &r, &at, &cl);
    if (rc == 0)
        rc = view(v, &r, &at, cl);
    reads_free(&r);
    if (rc)
        jemalloc_stats_view_free(v);
    return rc;
}

void jemalloc_stats_view_free(struct jemalloc_stats_view *v)
{
    free(v->small);
    free(v->large);
    v->small = v->large = NULL;
    v->nsmall = v->nlarge = 0;
}
