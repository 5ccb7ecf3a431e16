/* peek.c - `peek RE`: for each node matching RE, who calls it
 * and what it calls, each counted once per stack (like cum), with shares
 * of the node's cumulative amount. */
#include "lib/analysis/internal.h"
#include "lib/base/array.h"
#include "lib/base/text_escape.h"

#include <stdlib.h>
#include <string.h>

enum { CALLER = 0, CALLEE = 1 };

struct edge {
    uint32_t focus, other, dir;
    struct analysis_amount m;
};

struct peek {
    struct analysis_amount *flat, *cum;   /* per node (only matches filled) */
    uint32_t *stamp;
    uint32_t stamp_now;
    struct edge *edges;
    size_t nedges, edges_cap;
    struct u64map edge_at;          /* (focus, other, dir) -> edge */
    uint32_t *seen;                       /* edges added by the current stack */
    size_t nseen, seen_cap;
};

static void add(struct analysis_amount *to, struct analysis_amount m)
{
    to->bytes += m.bytes;
    to->objects += m.objects;
}

static int64_t edge_index(struct peek *pk, uint32_t focus, uint32_t other, uint32_t dir)
{
    uint64_t key = ((uint64_t)focus << 33) | ((uint64_t)other << 1) | dir;
    uint32_t *slot = u64map_slot(&pk->edge_at, key);
    if (!slot)
        return -1;
    if (*slot != U64MAP_NEW)
        return *slot;
    if (array_reserve(&pk->edges, &pk->edges_cap, pk->nedges + 1, sizeof *pk->edges, 256))
        return -1;
    pk->edges[pk->nedges] = (struct edge){focus, other, dir, {0, 0}};
    *slot = (uint32_t)pk->nedges;
    return (int64_t)pk->nedges++;
}

/* Add m to an edge unless this stack already did (recursion). */
static int add_edge(struct peek *pk, uint32_t focus, uint32_t other, uint32_t dir,
                    struct analysis_amount m)
{
    int64_t e = edge_index(pk, focus, other, dir);
    if (e < 0)
        return -1;
    for (size_t i = 0; i < pk->nseen; i++)
        if (pk->seen[i] == (uint32_t)e)
            return 0;
    if (array_reserve(&pk->seen, &pk->seen_cap, pk->nseen + 1, sizeof *pk->seen, 64))
        return -1;
    pk->seen[pk->nseen++] = (uint32_t)e;
    add(&pk->edges[e].m, m);
    return 0;
}

static int add_stack(struct analysis_query *q, struct peek *pk, const uint32_t *ids,
                     size_t n, struct analysis_amount m)
{
    pk->stamp_now++;
    pk->nseen = 0;
    for (size_t k = 0; k < n; k++) {
        if (!analysis_node_matches(q, QUERY_MATCH, ids[k]))
            continue;
        if (k == 0)
            add(&pk->flat[ids[k]], m);
        if (pk->stamp[ids[k]] != pk->stamp_now) {
            pk->stamp[ids[k]] = pk->stamp_now;
            add(&pk->cum[ids[k]], m);
        }
        if (k + 1 < n && add_edge(pk, ids[k], ids[k + 1], CALLER, m) < 0)
            return -1;
        if (k > 0 && add_edge(pk, ids[k], ids[k - 1], CALLEE, m) < 0)
            return -1;
    }
    return 0;
}

static int collect(struct analysis_query *q, const struct analysis_view *v, struct peek *pk)
{
    size_t nn = q->a->nnodes ? q->a->nnodes : 1;
    pk->flat = calloc(nn, sizeof *pk->flat);
    pk->cum = calloc(nn, sizeof *pk->cum);
    pk->stamp = calloc(nn, sizeof *pk->stamp);
    if (!pk->flat || !pk->cum || !pk->stamp)
        return -1;
    for (size_t i = 0; i < v->profile->nstacks; i++) {
        const uint32_t *ids;
        size_t n;
        if (!analysis_stack_nodes(q, v, i, &ids, &n))
            continue;
        if (add_stack(q, pk, ids, n, analysis_stack_amount(q, v->profile, i)) < 0)
            return -1;
    }
    return 0;
}

static const struct analysis_options *sort_opt;
static const struct peek *sort_peek;
static const struct analysis_node *sort_nodes;

static int focus_cmp(const void *pa, const void *pb)
{
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    double ka = analysis_key(sort_opt, sort_peek->cum[a]);
    double kb = analysis_key(sort_opt, sort_peek->cum[b]);
    if (ka != kb)
        return ka > kb ? -1 : 1;
    return strcmp(sort_nodes[a].name, sort_nodes[b].name);
}

static int edge_cmp(const void *pa, const void *pb)
{
    const struct edge *a = pa, *b = pb;
    if (a->focus != b->focus)
        return a->focus < b->focus ? -1 : 1;
    if (a->dir != b->dir)
        return a->dir < b->dir ? -1 : 1;
    double ka = analysis_key(sort_opt, a->m), kb = analysis_key(sort_opt, b->m);
    if (ka != kb)
        return ka > kb ? -1 : 1;
    return strcmp(sort_nodes[a->other].name, sort_nodes[b->other].name);
}

/* Matched nodes with something in them, heaviest first. */
static uint32_t *sorted_focus(const struct analysis_query *q, const struct peek *pk,
                              size_t *count)
{
    uint32_t *v = malloc((q->a->nnodes + 1) * sizeof *v);
    size_t n = 0;
    for (size_t i = 0; v && i < q->a->nnodes; i++)
        if (pk->cum[i].bytes != 0 || pk->cum[i].objects != 0)
            v[n++] = (uint32_t)i;
    sort_opt = q->opt;
    sort_peek = pk;
    sort_nodes = q->a->nodes;
    if (v)
        qsort(v, n, sizeof *v, focus_cmp);
    if (pk->nedges)
        qsort(pk->edges, pk->nedges, sizeof *pk->edges, edge_cmp);
    *count = n;
    return v;
}

/* The edges of one focus node in one direction: [*first, *end). */
static void edge_range(const struct peek *pk, uint32_t focus, uint32_t dir,
                       size_t *first, size_t *end)
{
    size_t i = 0;
    while (i < pk->nedges && (pk->edges[i].focus < focus ||
                              (pk->edges[i].focus == focus && pk->edges[i].dir < dir)))
        i++;
    *first = i;
    while (i < pk->nedges && pk->edges[i].focus == focus && pk->edges[i].dir == dir)
        i++;
    *end = i;
}

static void print_edges(FILE *out, const struct analysis_query *q, const struct peek *pk,
                        uint32_t focus, uint32_t dir)
{
    size_t i, end;
    char b[32], pct[16], nb[TEXT_ESCAPE_BUF];
    edge_range(pk, focus, dir, &i, &end);
    fprintf(out, "  %s:%s\n", dir == CALLER ? "callers" : "callees", i == end ? " (none)" : "");
    for (; i < end; i++)
        fprintf(out, "    %10s %6s  %s\n",
                analysis_format(q->opt, analysis_key(q->opt, pk->edges[i].m), false, b, sizeof b),
                analysis_percent(analysis_key(q->opt, pk->edges[i].m),
                                 analysis_key(q->opt, pk->cum[focus]), pct, sizeof pct),
                text_escape(q->a->nodes[pk->edges[i].other].name, nb, sizeof nb));
}

static void print_text(FILE *out, const struct analysis_query *q, const struct peek *pk,
                       const uint32_t *focus, size_t n, double total)
{
    char f[32], c[32], fp[16], cp[16], nb[TEXT_ESCAPE_BUF];
    for (size_t i = 0; i < n; i++) {
        uint32_t x = focus[i];
        double flat = analysis_key(q->opt, pk->flat[x]), cum = analysis_key(q->opt, pk->cum[x]);
        fprintf(out, "\n%s: flat %s (%s), cum %s (%s)\n",
                text_escape(q->a->nodes[x].name, nb, sizeof nb),
                analysis_format(q->opt, flat, false, f, sizeof f),
                analysis_percent(flat, total, fp, sizeof fp),
                analysis_format(q->opt, cum, false, c, sizeof c),
                analysis_percent(cum, total, cp, sizeof cp));
        print_edges(out, q, pk, x, CALLER);
        print_edges(out, q, pk, x, CALLEE);
    }
}

static json_object *json_edges(const struct analysis_query *q, const struct peek *pk,
                               uint32_t focus, uint32_t dir)
{
    size_t i, end;
    edge_range(pk, focus, dir, &i, &end);
    json_object *arr = json_object_new_array();
    for (; i < end; i++) {
        json_object *o = json_object_new_object();
        analysis_json_node(o, &q->a->nodes[pk->edges[i].other], "function");
        analysis_json_amount(o, "", pk->edges[i].m);
        double cum = analysis_key(q->opt, pk->cum[focus]);
        json_object_object_add(o, "share", json_object_new_double(
                                   cum ? analysis_key(q->opt, pk->edges[i].m) / cum : 0));
        json_object_array_add(arr, o);
    }
    return arr;
}

static int emit_json(const struct analysis_query *q, const struct analysis_source *src,
                     struct analysis_amount total, const struct peek *pk,
                     const uint32_t *focus, size_t n, FILE *out, struct mp_error *err)
{
    json_object *j = analysis_json_head(q, src, total);
    json_object *arr = json_object_new_array();
    for (size_t i = 0; i < n; i++) {
        json_object *o = json_object_new_object();
        analysis_json_node(o, &q->a->nodes[focus[i]], "function");
        analysis_json_amount(o, "flat_", pk->flat[focus[i]]);
        analysis_json_amount(o, "cum_", pk->cum[focus[i]]);
        json_object_object_add(o, "callers", json_edges(q, pk, focus[i], CALLER));
        json_object_object_add(o, "callees", json_edges(q, pk, focus[i], CALLEE));
        json_object_array_add(arr, o);
    }
    json_object_object_add(j, "functions", arr);
    return analysis_json_emit(j, out, err);
}

static int report(struct analysis_query *q, const struct analysis_view *v,
                  struct peek *pk, const struct analysis_source *src,
                  bool json, FILE *out, struct mp_error *err)
{
    size_t n;
    uint32_t *focus = sorted_focus(q, pk, &n);
    if (!focus)
        return mp_error_set(err, "out of memory");
    int rc = 0;
    struct analysis_amount total = analysis_total(q, v->profile);
    if (json)
        rc = emit_json(q, src, total, pk, focus, n, out, err);
    else if (n == 0)
        rc = mp_error_set(err, "no function matching '%s' holds any memory in %s; "
                          "try 'top' for the names, or a looser pattern",
                          q->opt->match, src && src->name ? src->name : "this profile");
    else {
        analysis_print_total(out, q, src, v->profile, total, total);
        print_text(out, q, pk, focus, n, analysis_key(q->opt, total));
    }
    free(focus);
    return rc;
}

int analysis_peek(struct analysis *a, const struct analysis_view *v,
                  const struct analysis_options *o, const struct analysis_source *src,
                  bool json, FILE *out, struct mp_error *err)
{
    if (!o->match)
        return mp_error_set(err, "peek needs a pattern: peek REGEX, e.g. peek 'leak_big'");
    struct analysis_query q;
    if (analysis_query_init(&q, a, o, &v->profile, 1, err) < 0)
        return -1;
    struct peek pk = {0};
    int rc = collect(&q, v, &pk);
    if (rc < 0)
        mp_error_set(err, "out of memory");
    else
        rc = report(&q, v, &pk, src, json, out, err);
    free(pk.flat);
    free(pk.cum);
    free(pk.stamp);
    free(pk.edges);
    free(pk.seen);
    u64map_free(&pk.edge_at);
    analysis_query_fini(&q);
    return rc;
}
