/* traces.c - `traces`: the heaviest whole stacks.  Stacks that
 * are the same after symbolization (and --hide) are merged, since several
 * return addresses in one function are one call path to a reader. */
#include "lib/analysis/internal.h"
#include "lib/base/array.h"
#include "lib/base/text_escape.h"

#include <stdlib.h>
#include <string.h>

struct trace {
    uint32_t start, len;       /* into traces.ids */
    uint32_t next;             /* next trace with the same hash, or UINT32_MAX */
    struct analysis_amount m;
};

struct traces {
    struct trace *v;
    size_t n, cap;
    uint32_t *ids;
    size_t nids, ids_cap;
    struct u64map by_hash;
};

static uint64_t seq_hash(const uint32_t *ids, size_t n)
{
    uint64_t h = n;
    for (size_t k = 0; k < n; k++)
        h = u64map_mix(h ^ ids[k]);
    return h;
}

static int push_trace(struct traces *t, const uint32_t *ids, size_t n,
                      struct analysis_amount m, uint32_t next)
{
    if (array_reserve(&t->v, &t->cap, t->n + 1, sizeof *t->v, 1024) ||
        array_reserve(&t->ids, &t->ids_cap, t->nids + n, sizeof *t->ids, 4096))
        return -1;
    memcpy(t->ids + t->nids, ids, n * sizeof *ids);
    t->v[t->n] = (struct trace){(uint32_t)t->nids, (uint32_t)n, next, m};
    t->nids += n;
    t->n++;
    return 0;
}

static int add_trace(struct traces *t, const uint32_t *ids, size_t n,
                     struct analysis_amount m)
{
    uint32_t *slot = u64map_slot(&t->by_hash, seq_hash(ids, n));
    if (!slot)
        return -1;
    uint32_t first = *slot == U64MAP_NEW ? UINT32_MAX : *slot;
    for (uint32_t i = first; i != UINT32_MAX; i = t->v[i].next) {
        struct trace *tr = &t->v[i];
        if (tr->len == n && memcmp(t->ids + tr->start, ids, n * sizeof *ids) == 0) {
            tr->m.bytes += m.bytes;
            tr->m.objects += m.objects;
            return 0;
        }
    }
    *slot = (uint32_t)t->n;
    return push_trace(t, ids, n, m, first);
}

static const struct analysis_options *sort_opt;

static int trace_cmp(const void *pa, const void *pb)
{
    const struct trace *a = pa, *b = pb;
    double ka = analysis_key(sort_opt, a->m), kb = analysis_key(sort_opt, b->m);
    if (ka != kb)
        return ka > kb ? -1 : 1;
    return a->start < b->start ? -1 : a->start > b->start;
}

static int collect(struct analysis_query *q, const struct analysis_view *v,
                   struct traces *t, struct analysis_amount *shown)
{
    for (size_t i = 0; i < v->profile->nstacks; i++) {
        const uint32_t *ids;
        size_t n;
        if (!analysis_stack_nodes(q, v, i, &ids, &n))
            continue;
        struct analysis_amount m = analysis_stack_amount(q, v->profile, i);
        shown->bytes += m.bytes;
        shown->objects += m.objects;
        if ((m.bytes != 0 || m.objects != 0) && add_trace(t, ids, n, m) < 0)
            return -1;
    }
    sort_opt = q->opt;
    if (t->n)
        qsort(t->v, t->n, sizeof *t->v, trace_cmp);
    return 0;
}

static void print_text(FILE *out, const struct analysis_query *q, const struct traces *t,
                       size_t n, double total)
{
    char b[32], pct[16], nb[TEXT_ESCAPE_BUF];
    for (size_t i = 0; i < n && !analysis_cancelled(); i++) {
        const struct trace *tr = &t->v[i];
        fprintf(out, "-----------+-------------------------------------------------------\n");
        fprintf(out, "%10s | %.0f objects, %s of the total\n",
                analysis_format_bytes(tr->m.bytes, q->opt->exact, false, b, sizeof b),
                tr->m.objects,
                analysis_percent(analysis_key(q->opt, tr->m), total, pct, sizeof pct));
        for (uint32_t k = 0; k < tr->len; k++)
            fprintf(out, "%10s | %s\n", "",
                    text_escape(q->a->nodes[t->ids[tr->start + k]].name, nb, sizeof nb));
    }
}

static int emit_json(const struct analysis_query *q, const struct analysis_source *src,
                     struct analysis_amount total, const struct traces *t, size_t n,
                     FILE *out, struct mp_error *err)
{
    json_object *j = analysis_json_head(q, src, total);
    json_object *arr = json_object_new_array();
    for (size_t i = 0; i < n; i++) {
        const struct trace *tr = &t->v[i];
        json_object *o = json_object_new_object();
        analysis_json_amount(o, "", tr->m);
        json_object *frames = json_object_new_array();
        for (uint32_t k = 0; k < tr->len; k++)
            json_object_array_add(frames, json_object_new_string(
                                      q->a->nodes[t->ids[tr->start + k]].name));
        json_object_object_add(o, "frames", frames);
        json_object_array_add(arr, o);
    }
    json_object_object_add(j, "traces", arr);
    return analysis_json_emit(j, out, err);
}

int analysis_traces(struct analysis *a, const struct analysis_view *v,
                    const struct analysis_options *o, const struct analysis_source *src,
                    bool json, FILE *out, struct mp_error *err)
{
    struct analysis_query q;
    if (analysis_query_init(&q, a, o, &v->profile, 1, err) < 0)
        return -1;
    struct traces t = {0};
    struct analysis_amount shown = {0, 0};
    int rc = collect(&q, v, &t, &shown);
    if (rc < 0) {
        mp_error_set(err, "out of memory");
    } else {
        struct analysis_amount total = analysis_total(&q, v->profile);
        size_t n = o->limit > 0 && (size_t)o->limit < t.n ? (size_t)o->limit : t.n;
        if (json) {
            rc = emit_json(&q, src, total, &t, n, out, err);
        } else {
            analysis_print_total(out, &q, src, v->profile, total, shown);
            print_text(out, &q, &t, n, analysis_key(o, total));
        }
    }
    free(t.v);
    free(t.ids);
    u64map_free(&t.by_hash);
    analysis_query_fini(&q);
    return rc;
}
