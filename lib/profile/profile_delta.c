/* profile_delta.c - one profile less another (profile_delta.h): the
 * stacks of before in a hash table keyed on their frames, after's stacks
 * looked up in it, then before's unmatched ones negated. */
#include "lib/profile/profile_delta.h"

#include <stdlib.h>
#include <string.h>

struct stack_table {
    const struct profile *p;
    uint32_t *slot;             /* stack index + 1; 0: empty */
    size_t nslots;
    bool *matched;              /* per stack of p */
};

static uint64_t stack_hash(const struct profile *p, const struct profile_stack *st)
{
    uint64_t h = 1469598103934665603ULL ^ st->nframes;
    for (uint32_t i = 0; i < st->nframes; i++)
        h = (h ^ profile_frame(p, (size_t)st->frame0 + i)) * 1099511628211ULL;
    return h;
}

/* The same return addresses (each profile indexes its own addrs). */
static bool same_frames(const struct profile *a, const struct profile_stack *x,
                        const struct profile *b, const struct profile_stack *y)
{
    if (x->nframes != y->nframes)
        return false;
    for (uint32_t i = 0; i < x->nframes; i++)
        if (profile_frame(a, (size_t)x->frame0 + i) != profile_frame(b, (size_t)y->frame0 + i))
            return false;
    return true;
}

static int table_build(struct stack_table *t, const struct profile *p)
{
    t->p = p;
    t->nslots = 16;
    while (t->nslots < p->nstacks * 2)
        t->nslots *= 2;
    t->slot = calloc(t->nslots, sizeof *t->slot);
    t->matched = calloc(p->nstacks ? p->nstacks : 1, sizeof *t->matched);
    if (!t->slot || !t->matched)
        return -1;
    for (size_t i = 0; i < p->nstacks; i++) {
        size_t k = stack_hash(p, &p->stacks[i]) & (t->nslots - 1);
        while (t->slot[k])
            k = (k + 1) & (t->nslots - 1);
        t->slot[k] = (uint32_t)i + 1;
    }
    return 0;
}

/* The stack of t's profile with st's frames (st of profile q), or -1. */
static long table_find(const struct stack_table *t, const struct profile *q,
                       const struct profile_stack *st)
{
    size_t k = stack_hash(q, st) & (t->nslots - 1);
    for (; t->slot[k]; k = (k + 1) & (t->nslots - 1)) {
        uint32_t i = t->slot[k] - 1;
        if (!t->matched[i] && same_frames(t->p, &t->p->stacks[i], q, st))
            return i;
    }
    return -1;
}

static struct profile_values minus(struct profile_values a, const struct profile_values *b)
{
    if (b) {
        a.inuse_objects -= b->inuse_objects;
        a.inuse_bytes -= b->inuse_bytes;
        a.alloc_objects -= b->alloc_objects;
        a.alloc_bytes -= b->alloc_bytes;
    }
    return a;
}

static bool all_zero(const struct profile_values *v)
{
    return v->inuse_objects == 0 && v->inuse_bytes == 0 && v->alloc_objects == 0 &&
           v->alloc_bytes == 0;
}

/* Append a stack (frames of st in src) with values v to d; d's arrays are
 * sized for every stack and frame of both profiles, and d's addrs are
 * src's from addr0 on. */
static void append(struct profile *d, const struct profile *src, uint32_t addr0,
                   const struct profile_stack *st, struct profile_values v)
{
    if (all_zero(&v))
        return;
    struct profile_stack *out = &d->stacks[d->nstacks++];
    *out = (struct profile_stack){.frame0 = (uint32_t)d->nframes, .nframes = st->nframes,
                                  .v = v};
    for (uint32_t i = 0; i < st->nframes; i++)
        d->frames[d->nframes++] = addr0 + src->frames[st->frame0 + i];
    d->total.inuse_objects += v.inuse_objects;
    d->total.inuse_bytes += v.inuse_bytes;
    d->total.alloc_objects += v.alloc_objects;
    d->total.alloc_bytes += v.alloc_bytes;
}

/* after's mappings and build-ids, copied. */
static int copy_process(struct profile *d, const struct profile *after)
{
    const struct map_list *m = &after->maps;
    d->maps.v = calloc(m->n ? m->n : 1, sizeof *d->maps.v);
    if (!d->maps.v)
        return -1;
    d->maps.cap = m->n;
    for (; d->maps.n < m->n; d->maps.n++) {
        d->maps.v[d->maps.n] = m->v[d->maps.n];
        if (!(d->maps.v[d->maps.n].path = strdup(m->v[d->maps.n].path)))
            return -1;
    }
    for (size_t i = 0; i < after->nobject_ids; i++)
        if (profile_add_object_id(d, after->object_ids[i].path, after->object_ids[i].build_id))
            return -1;
    if (after->kept_dir && !(d->kept_dir = strdup(after->kept_dir)))
        return -1;
    return 0;
}

static struct profile *delta_shell(const struct profile *before, const struct profile *after)
{
    struct profile *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    d->format = after->format;
    d->period = after->period;
    d->header_period = after->header_period;
    d->sample_rate = after->sample_rate;
    d->has_alloc = after->has_alloc || before->has_alloc;
    d->page_faults = after->page_faults && before->page_faults;
    d->taken_at = after->taken_at;
    size_t nst = before->nstacks + after->nstacks, nfr = before->nframes + after->nframes;
    d->stacks = calloc(nst ? nst : 1, sizeof *d->stacks);
    d->frames = calloc(nfr ? nfr : 1, sizeof *d->frames);
    /* after's addresses then before's (an address in both is there twice) */
    d->naddrs = after->naddrs + before->naddrs;
    d->addrs = malloc((d->naddrs ? d->naddrs : 1) * sizeof *d->addrs);
    d->name = strdup("delta");
    if (!d->stacks || !d->frames || !d->addrs || !d->name || copy_process(d, after)) {
        profile_free(d);
        return NULL;
    }
    if (after->naddrs)
        memcpy(d->addrs, after->addrs, after->naddrs * sizeof *d->addrs);
    if (before->naddrs)
        memcpy(d->addrs + after->naddrs, before->addrs, before->naddrs * sizeof *d->addrs);
    return d;
}

struct profile *profile_delta(const struct profile *before, const struct profile *after,
                              struct mp_error *err)
{
    struct stack_table t = {0};
    struct profile *d = delta_shell(before, after);
    if (!d || table_build(&t, before) < 0) {
        profile_free(d);
        free(t.slot);
        free(t.matched);
        mp_error_set(err, "out of memory taking the difference of two profiles");
        return NULL;
    }
    for (size_t i = 0; i < after->nstacks; i++) {
        const struct profile_stack *st = &after->stacks[i];
        long b = table_find(&t, after, st);
        if (b >= 0)
            t.matched[b] = true;
        append(d, after, 0, st, minus(st->v, b >= 0 ? &before->stacks[b].v : NULL));
    }
    for (size_t i = 0; i < before->nstacks; i++)
        if (!t.matched[i])
            append(d, before, (uint32_t)after->naddrs, &before->stacks[i],
                   minus((struct profile_values){0}, &before->stacks[i].v));
    free(t.slot);
    free(t.matched);
    return d;
}
