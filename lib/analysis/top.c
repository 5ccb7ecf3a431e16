/* top.c - `top` and `diff`: flat and cumulative amounts per node,
 * jeprof's --text columns.  flat is charged to a stack's innermost node;
 * cum to every distinct node of the stack once (so recursion does not
 * count twice).  A diff is the same sums with the base's stacks counted
 * negatively: both views share node ids, so stacks match by symbol.
 * analysis_top_since is top with one more column, each row's change since
 * an older view (the live view's first dump): the same sums taken apart. */
#include "lib/analysis/internal.h"
#include "lib/base/text_escape.h"

#include <stdlib.h>
#include <string.h>

struct top_sums {
    struct analysis_amount *flat, *cum;
    uint32_t *stamp;           /* last stack that added to cum, per node */
    uint32_t stamp_now;
    struct analysis_amount shown;
    size_t nnodes;             /* the arrays' length */
};

static void add(struct analysis_amount *to, struct analysis_amount m, double w)
{
    to->bytes += w * m.bytes;
    to->objects += w * m.objects;
}

static void sum_view(struct analysis_query *q, const struct analysis_view *v,
                     double weight, struct top_sums *t)
{
    const struct profile *p = v->profile;
    for (size_t i = 0; i < p->nstacks; i++) {
        const uint32_t *ids;
        size_t n;
        if (!analysis_stack_nodes(q, v, i, &ids, &n))
            continue;
        struct analysis_amount m = analysis_stack_amount(q, p, i);
        add(&t->shown, m, weight);
        if (n == 0)
            continue;
        add(&t->flat[ids[0]], m, weight);
        t->stamp_now++;
        for (size_t k = 0; k < n; k++) {
            if (t->stamp[ids[k]] == t->stamp_now)
                continue;
            t->stamp[ids[k]] = t->stamp_now;
            add(&t->cum[ids[k]], m, weight);
        }
    }
}

static const struct analysis_options *sort_opt;
static const struct analysis_node *sort_nodes;

static int row_cmp(const void *pa, const void *pb)
{
    const struct analysis_top_row *a = pa, *b = pb;
    double ka = analysis_key(sort_opt, sort_opt->cum ? a->cum : a->flat);
    double kb = analysis_key(sort_opt, sort_opt->cum ? b->cum : b->flat);
    if (ka != kb)
        return ka > kb ? -1 : 1;
    return strcmp(sort_nodes[a->node].name, sort_nodes[b->node].name);
}

static bool nonzero(struct analysis_amount m)
{
    return m.bytes != 0 || m.objects != 0;
}

/* Rows for every node with something to show, sorted for output. */
static struct analysis_top_row *collect_rows(const struct analysis_query *q,
                                    const struct top_sums *t, size_t *nrows)
{
    size_t nn = q->a->nnodes, n = 0;
    struct analysis_top_row *rows = malloc((nn ? nn : 1) * sizeof *rows);
    if (!rows)
        return NULL;
    for (size_t i = 0; i < nn; i++)
        if (nonzero(t->flat[i]) || nonzero(t->cum[i]))
            rows[n++] = (struct analysis_top_row){(uint32_t)i, t->flat[i], t->cum[i]};
    sort_opt = q->opt;
    sort_nodes = q->a->nodes;
    qsort(rows, n, sizeof *rows, row_cmp);
    *nrows = n;
    return rows;
}

static const char *column_title(enum analysis_granularity g)
{
    static const char *const t[] = {"function", "line", "file", "address"};
    return t[g];
}

/* since: the sums of an older view, for a column of each row's change. */
static void print_rows(FILE *out, const struct analysis_query *q,
                       const struct analysis_top_row *rows, size_t n, double total, bool growth,
                       const struct top_sums *since)
{
    const struct analysis_options *o = q->opt;
    char f[32], fp[16], sp[16], c[32], cp[16], g[32], nb[TEXT_ESCAPE_BUF];
    fprintf(out, "%10s %6s %6s %10s %6s  ", "flat", "flat%", "sum%", "cum", "cum%");
    if (since)
        fprintf(out, "%10s  ", o->cum ? "cum grew" : "flat grew");
    fprintf(out, "%s\n", column_title(q->a->granularity));
    double running = 0;
    for (size_t i = 0; i < n; i++) {
        double flat = analysis_key(o, rows[i].flat), cum = analysis_key(o, rows[i].cum);
        running += flat;
        fprintf(out, "%10s %6s %6s %10s %6s  ",
                analysis_format(o, flat, growth, f, sizeof f),
                analysis_percent(flat, total, fp, sizeof fp),
                analysis_percent(running, total, sp, sizeof sp),
                analysis_format(o, cum, growth, c, sizeof c),
                analysis_percent(cum, total, cp, sizeof cp));
        if (since) {
            uint32_t id = rows[i].node;
            double then = id < since->nnodes
                ? analysis_key(o, o->cum ? since->cum[id] : since->flat[id]) : 0;
            fprintf(out, "%10s  ", analysis_format(o, (o->cum ? cum : flat) - then, true,
                                                   g, sizeof g));
        }
        fprintf(out, "%s\n", text_escape(q->a->nodes[rows[i].node].name, nb, sizeof nb));
    }
}

static void print_diff_total(FILE *out, const struct analysis_query *q,
                             const struct analysis_source *src,
                             struct analysis_amount growth, struct analysis_amount btotal)
{
    const struct analysis_options *o = q->opt;
    char g[32], t[32], bn[TEXT_ESCAPE_BUF], nn[TEXT_ESCAPE_BUF];
    fprintf(out, "Growth: %s, %+.0f %s %s from %s to %s (%s total %s)\n",
            analysis_format_bytes(growth.bytes, o->exact, true, g, sizeof g),
            growth.objects, analysis_counted(q), analysis_measured(q),
            src->base_name ? text_escape(src->base_name, bn, sizeof bn) : "base",
            src->name ? text_escape(src->name, nn, sizeof nn) : "profile",
            src->name ? src->name : "profile",
            analysis_format_bytes(btotal.bytes, o->exact, false, t, sizeof t));
}

static int emit_json(const struct analysis_query *q, const struct analysis_source *src,
                     struct analysis_amount total, const struct analysis_top_row *rows,
                     size_t n, const struct analysis_amount *growth,
                     FILE *out, struct mp_error *err)
{
    json_object *j = analysis_json_head(q, src, total);
    if (growth)
        analysis_json_amount(j, "growth_", *growth);
    json_object *arr = json_object_new_array();
    for (size_t i = 0; i < n; i++) {
        json_object *r = json_object_new_object();
        analysis_json_node(r, &q->a->nodes[rows[i].node], "function");
        analysis_json_amount(r, "flat_", rows[i].flat);
        analysis_json_amount(r, "cum_", rows[i].cum);
        json_object_array_add(arr, r);
    }
    json_object_object_add(j, "rows", arr);
    return analysis_json_emit(j, out, err);
}

static int sums_init(struct top_sums *t, size_t nnodes)
{
    memset(t, 0, sizeof *t);
    size_t n = nnodes ? nnodes : 1;
    t->nnodes = nnodes;
    t->flat = calloc(n, sizeof *t->flat);
    t->cum = calloc(n, sizeof *t->cum);
    t->stamp = calloc(n, sizeof *t->stamp);
    return t->flat && t->cum && t->stamp ? 0 : -1;
}

static void sums_fini(struct top_sums *t)
{
    free(t->flat);
    free(t->cum);
    free(t->stamp);
}

static int report(struct analysis_query *q, const struct analysis_view *v,
                  const struct analysis_view *base, const struct analysis_source *src,
                  bool json, FILE *out, struct mp_error *err)
{
    struct top_sums t;
    if (sums_init(&t, q->a->nnodes) < 0) {
        sums_fini(&t);
        return mp_error_set(err, "out of memory");
    }
    sum_view(q, v, 1.0, &t);
    struct analysis_amount total = analysis_total(q, v->profile), growth = total;
    if (base) {
        struct analysis_amount old = analysis_total(q, base->profile);
        growth.bytes -= old.bytes;
        growth.objects -= old.objects;
        sum_view(q, base, -1.0, &t);
    }
    size_t n;
    struct analysis_top_row *rows = collect_rows(q, &t, &n);
    int rc = 0;
    if (!rows) {
        rc = mp_error_set(err, "out of memory");
    } else {
        size_t shown = q->opt->limit > 0 && (size_t)q->opt->limit < n ? (size_t)q->opt->limit : n;
        if (json) {
            rc = emit_json(q, src, total, rows, shown, base ? &growth : NULL, out, err);
        } else {
            if (base)
                print_diff_total(out, q, src, growth, total);
            else
                analysis_print_total(out, q, src, v->profile, total, t.shown);
            print_rows(out, q, rows, shown, analysis_key(q->opt, total), base != NULL, NULL);
        }
    }
    free(rows);
    sums_fini(&t);
    return rc;
}

int analysis_top(struct analysis *a, const struct analysis_view *v,
                 const struct analysis_view *base,
                 const struct analysis_options *o, const struct analysis_source *src,
                 bool json, FILE *out, struct mp_error *err)
{
    /* Views first: they may add nodes, and the sums are sized by nodes. */
    const struct profile *profiles[2] = {v->profile, base ? base->profile : NULL};
    struct analysis_query q;
    if (analysis_query_init(&q, a, o, profiles, base ? 2 : 1, err) < 0)
        return -1;
    int rc = report(&q, v, base, src, json, out, err);
    analysis_query_fini(&q);
    return rc;
}

int analysis_top_since(struct analysis *a, const struct analysis_view *v,
                       const struct analysis_view *since, const struct analysis_options *o,
                       const struct analysis_source *src, FILE *out, struct mp_error *err)
{
    const struct profile *profiles[2] = {v->profile, since->profile};
    struct analysis_query q;
    if (analysis_query_init(&q, a, o, profiles, 2, err) < 0)
        return -1;
    struct top_sums now, then;
    int rc = 0;
    if ((sums_init(&now, a->nnodes) | sums_init(&then, a->nnodes)) < 0) {
        rc = mp_error_set(err, "out of memory");
        sums_fini(&now);
        sums_fini(&then);
        analysis_query_fini(&q);
        return rc;
    }
    sum_view(&q, v, 1.0, &now);
    sum_view(&q, since, 1.0, &then);
    struct analysis_amount total = analysis_total(&q, v->profile);
    struct analysis_amount old = analysis_total(&q, since->profile);
    size_t n;
    struct analysis_top_row *rows = collect_rows(&q, &now, &n);
    if (!rows) {
        rc = mp_error_set(err, "out of memory");
    } else {
        char g[32], bn[TEXT_ESCAPE_BUF];
        size_t shown = o->limit > 0 && (size_t)o->limit < n ? (size_t)o->limit : n;
        analysis_print_total(out, &q, src, v->profile, total, now.shown);
        fprintf(out, "Growth: %s since %s\n",
                analysis_format(o, analysis_key(o, total) - analysis_key(o, old), true,
                                g, sizeof g),
                src && src->base_name ? text_escape(src->base_name, bn, sizeof bn) : "the base");
        print_rows(out, &q, rows, shown, analysis_key(o, total), false, &then);
    }
    free(rows);
    sums_fini(&now);
    sums_fini(&then);
    analysis_query_fini(&q);
    return rc;
}

int analysis_top_rows(struct analysis *a, const struct analysis_view *v,
                      const struct analysis_options *o, struct analysis_top_row **rows,
                      size_t *nrows, struct analysis_amount *total, struct mp_error *err)
{
    const struct profile *profiles[1] = {v->profile};
    struct analysis_query q;
    if (analysis_query_init(&q, a, o, profiles, 1, err) < 0)
        return -1;
    struct top_sums t;
    int rc = 0;
    if (sums_init(&t, a->nnodes) < 0) {
        rc = mp_error_set(err, "out of memory");
    } else {
        sum_view(&q, v, 1.0, &t);
        *total = analysis_total(&q, v->profile);
        *rows = collect_rows(&q, &t, nrows);
        if (!*rows)
            rc = mp_error_set(err, "out of memory");
    }
    sums_fini(&t);
    analysis_query_fini(&q);
    return rc;
}
