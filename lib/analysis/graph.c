/* graph.c - `graph`: the call graph as Graphviz DOT, the picture
 * jeprof --dot/--svg draws.  A node per function (or line, file, address)
 * with its flat and cum, its box growing with flat; an edge per caller ->
 * callee pair weighted by what was allocated through that call.  Like cum,
 * an edge counts once per stack even when recursion repeats it; a
 * function calling itself draws no edge (its cum already says it).
 * Nodes under --nodefraction and edges under --edgefraction of the total
 * are left out, as jeprof does (defaults 0.005 and 0.001).  As in pprof,
 * a path through left-out nodes still joins the kept nodes at its ends by
 * a dotted "residual" edge, and nodes and edges are coloured from grey to
 * red by their share of the total. */
#include "lib/analysis/internal.h"
#include "lib/base/text_escape.h"

#include <math.h>
#include <string.h>

struct graph_edge {
    uint32_t caller, callee;
    uint32_t stamp;            /* last stack that added to it */
    bool residual;             /* some path it stands for skips left-out nodes */
    double value;
};

struct graph_node {
    double flat, cum;          /* in the ranking index */
    uint32_t stamp;            /* last stack that added to cum */
    uint32_t dot_id;           /* N<id> in the output, 0 = left out */
};

struct graph {
    const struct analysis_query *q;
    struct graph_node *node;   /* per analysis node */
    uint32_t now;              /* the stack being added, from 1 */
    struct graph_edge *edges;
    size_t nedges, edges_cap;
    struct u64map edge_of;     /* (caller, callee) -> index in edges */
};

/* ---- sums ---- */

static struct graph_edge *edge(struct graph *g, uint32_t caller, uint32_t callee)
{
    uint32_t *slot = u64map_slot(&g->edge_of, (uint64_t)caller << 32 | callee);
    if (!slot)
        return NULL;
    if (*slot == U64MAP_NEW) {
        if (analysis_reserve(&g->edges, &g->edges_cap, g->nedges + 1, sizeof *g->edges) < 0)
            return NULL;
        g->edges[g->nedges] = (struct graph_edge){caller, callee, 0, false, 0};
        *slot = (uint32_t)g->nedges++;
    }
    return &g->edges[*slot];
}

/* One stack (innermost first): flat to its innermost node, cum to each of
 * its nodes once. */
static void add_stack_nodes(struct graph *g, const uint32_t *ids, size_t n, double value)
{
    g->now++;
    g->node[ids[0]].flat += value;
    for (size_t k = 0; k < n; k++) {
        struct graph_node *x = &g->node[ids[k]];
        if (x->stamp != g->now) {
            x->stamp = g->now;
            x->cum += value;
        }
    }
}

/* The same stack's edges, once kept nodes are known: each pair of kept
 * nodes next to each other once the left-out ones are skipped, once per
 * stack; residual when nodes were skipped between them. */
static int add_stack_edges(struct graph *g, const uint32_t *ids, size_t n, double value)
{
    g->now++;
    size_t callee = SIZE_MAX;  /* index in ids of the last kept node */
    for (size_t k = 0; k < n; k++) {
        if (!g->node[ids[k]].dot_id)
            continue;
        if (callee != SIZE_MAX && ids[callee] != ids[k]) {
            struct graph_edge *e = edge(g, ids[k], ids[callee]);
            if (!e)
                return -1;
            if (e->stamp != g->now) {
                e->stamp = g->now;
                e->value += value;
            }
            if (k > callee + 1)
                e->residual = true;
        }
        callee = k;
    }
    return 0;
}

/* Sums nodes (with edges == false) or edges over the stacks the view keeps. */
static int sum_stacks(struct analysis_query *q, const struct analysis_view *v, struct graph *g,
                      bool edges, double *shown)
{
    for (size_t i = 0; i < v->profile->nstacks; i++) {
        const uint32_t *ids;
        size_t n;
        if (!analysis_stack_nodes(q, v, i, &ids, &n))
            continue;
        double value = analysis_key(q->opt, analysis_stack_amount(q, v->profile, i));
        *shown += value;
        if (n == 0 || value == 0)
            continue;
        if (!edges)
            add_stack_nodes(g, ids, n, value);
        else if (add_stack_edges(g, ids, n, value) < 0)
            return -1;
    }
    return 0;
}

/* ---- what is drawn, in which order ---- */

static int node_order(const void *pa, const void *pb, void *graph)
{
    const struct graph *g = graph;
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    const struct graph_node *x = &g->node[a], *y = &g->node[b];
    if (x->flat != y->flat)
        return x->flat > y->flat ? -1 : 1;
    if (x->cum != y->cum)
        return x->cum > y->cum ? -1 : 1;
    return strcmp(g->q->a->nodes[a].name, g->q->a->nodes[b].name);
}

/* The nodes at or over min, heaviest first; numbers them in dot_id. */
static uint32_t *kept_nodes(struct graph *g, double min, size_t *n)
{
    size_t nn = g->q->a->nnodes;
    uint32_t *kept = malloc((nn ? nn : 1) * sizeof *kept);
    *n = 0;
    if (!kept)
        return NULL;
    for (size_t i = 0; i < nn; i++)
        if (g->node[i].cum > 0 && g->node[i].cum >= min)
            kept[(*n)++] = (uint32_t)i;
    qsort_r(kept, *n, sizeof *kept, node_order, g);
    for (size_t i = 0; i < *n; i++)
        g->node[kept[i]].dot_id = (uint32_t)i + 1;
    return kept;
}

static int edge_order(const void *pa, const void *pb, void *graph)
{
    const struct graph *g = graph;
    const struct graph_edge *a = pa, *b = pb;
    if (a->value != b->value)
        return a->value > b->value ? -1 : 1;
    uint32_t ca = g->node[a->caller].dot_id, cb = g->node[b->caller].dot_id;
    if (ca != cb)
        return ca < cb ? -1 : 1;
    return g->node[a->callee].dot_id < g->node[b->callee].dot_id ? -1 : 1;
}

/* Keeps the edges at or over min, heaviest first (edges join only kept
 * nodes). */
static size_t keep_edges(struct graph *g, double min)
{
    size_t kept = 0;
    for (size_t i = 0; i < g->nedges; i++) {
        const struct graph_edge *e = &g->edges[i];
        if (e->value > 0 && e->value >= min)
            g->edges[kept++] = *e;
    }
    if (kept > 1)  /* edges is NULL when there are none */
        qsort_r(g->edges, kept, sizeof *g->edges, edge_order, g);
    return kept;
}

/* ---- DOT ---- */

/* s inside a DOT "..." string: control bytes and broken UTF-8 escaped as
 * for the terminal (Graphviz rejects invalid UTF-8, and the .dot file is
 * read by people too), then quotes and backslashes escaped so that DOT
 * reads neither an end of string nor an escape (\n, \l, \N...) of its
 * own: "\x1b" arrives in the picture as those four characters. */
static void put_dot_string(FILE *out, const char *s)
{
    char eb[TEXT_ESCAPE_BUF];
    for (const char *c = text_escape(s, eb, sizeof eb); *c; c++) {
        if (*c == '"' || *c == '\\')
            putc('\\', out);
        putc(*c, out);
    }
}

struct dot {
    FILE *out;
    const struct analysis_query *q;
    struct graph *g;
    double total;
};

/* pprof's colour scale (its dotColor): grey for a small share of the
 * total, through orange to red for all of it; a pale fill and a strong
 * outline of the same hue.  Scores near 0 lose saturation so that light
 * nodes stay grey, and the 0.3 power spreads the middle shares apart. */
static void put_weight_colour(FILE *out, double score, bool background)
{
    double saturation = background ? 0.1 : 1.0, value = background ? 0.93 : 0.7;
    score = fmax(-1, fmin(1, score));
    if (fabs(score) < 0.2)
        saturation *= fabs(score) / 0.2;
    score = score < 0 ? -pow(-score, 0.3) : pow(score, 0.3);
    double r = value, g = value * (1 - saturation * score), b = value * (1 - saturation);
    if (score < 0) {
        r = value * (1 + saturation * score);
        g = value;
    }
    fprintf(out, "\"#%02x%02x%02x\"", (unsigned)(r * 255), (unsigned)(g * 255),
            (unsigned)(b * 255));
}

static double score(const struct dot *d, double v)
{
    return d->total != 0 ? v / fabs(d->total) : 0;
}

static void put_amount(const struct dot *d, const char *what, double v)
{
    char b[32], pct[16];
    fprintf(d->out, "%s %s%s (%s)", what, analysis_format(d->q->opt, v, false, b, sizeof b),
            d->q->opt->objects ? " objects" : "",
            analysis_percent(v, d->total, pct, sizeof pct));
}

static void put_legend(const struct dot *d, const struct analysis_source *src, double shown,
                       size_t nodes, size_t edges)
{
    const struct analysis_options *o = d->q->opt;
    char b[32], nmin[32], emin[32];
    fputs("  legend [shape=plaintext, fontsize=16, label=\"", d->out);
    put_dot_string(d->out, src && src->name ? src->name : "profile");
    fprintf(d->out, "\\lTotal: %s %s%s%s\\l", analysis_format(o, d->total, false, b, sizeof b),
            o->objects ? analysis_counted(d->q) : "", o->objects ? " " : "", analysis_measured(d->q));
    if (analysis_filtered(d->q)) {
        put_amount(d, "Shown after --focus/--ignore:", shown);
        fputs("\\l", d->out);
    }
    fprintf(d->out, "%zu nodes (under %s left out), %zu edges (under %s left out)\\l"
            "grey to red: share of the total; dotted edge: a path through nodes left "
            "out\\l\"];\n",
            nodes, analysis_format(o, o->nodefraction * d->total, false, nmin, sizeof nmin),
            edges, analysis_format(o, o->edgefraction * d->total, false, emin, sizeof emin));
}

static void put_node(const struct dot *d, uint32_t node)
{
    const struct graph_node *x = &d->g->node[node];
    /* The font, and so the box, grows with the square root of flat: the
     * box's area then follows flat. */
    double fontsize = 8 + (d->total > 0 ? 42 * sqrt(fabs(x->flat) / d->total) : 0);
    fprintf(d->out, "  N%u [label=\"", x->dot_id);
    put_dot_string(d->out, d->q->a->nodes[node].name);
    fputs("\\n", d->out);
    put_amount(d, "flat", x->flat);
    fputs("\\n", d->out);
    put_amount(d, "cum", x->cum);
    fprintf(d->out, "\", shape=box, fontsize=%.1f, style=filled, color=", fontsize);
    put_weight_colour(d->out, score(d, x->cum), false);
    fputs(", fillcolor=", d->out);
    put_weight_colour(d->out, score(d, x->cum), true);
    fputs("];\n", d->out);
}

static void put_edge(const struct dot *d, const struct graph_edge *e)
{
    char b[32];
    double share = d->total > 0 ? fmin(1, 3 * e->value / d->total) : 0;
    /* dot slows down and may crash on huge weights: jeprof caps them too. */
    double weight = fmin(pow(e->value, 0.7), 100000);
    fprintf(d->out, "  N%u -> N%u [label=\"%s\", weight=%d, penwidth=%.2f, color=",
            d->g->node[e->caller].dot_id, d->g->node[e->callee].dot_id,
            analysis_format(d->q->opt, e->value, false, b, sizeof b), (int)weight,
            1 + 4 * share);
    put_weight_colour(d->out, score(d, e->value), false);
    fputs(e->residual ? ", style=dotted];\n" : "];\n", d->out);
}

static void print_dot(const struct dot *d, const struct analysis_source *src, double shown,
                      const uint32_t *nodes, size_t nnodes, size_t nedges)
{
    FILE *out = d->out;
    fprintf(out, "digraph \"memprof\" {\n  node [fontname=\"Helvetica\"];\n  edge [fontname=\"Helvetica\"];\n");
    put_legend(d, src, shown, nnodes, nedges);
    for (size_t i = 0; i < nnodes; i++)
        put_node(d, nodes[i]);
    for (size_t i = 0; i < nedges; i++)
        put_edge(d, &d->g->edges[i]);
    fputs("}\n", out);
}

int analysis_graph(struct analysis *a, const struct analysis_view *v,
                   const struct analysis_options *o, const struct analysis_source *src,
                   FILE *out, struct mp_error *err)
{
    if (analysis_check_fraction("--nodefraction", o->nodefraction, err) < 0 ||
        analysis_check_fraction("--edgefraction", o->edgefraction, err) < 0)
        return -1;
    struct analysis_query q;
    if (analysis_query_init(&q, a, o, &v->profile, 1, err) < 0)
        return -1;
    struct graph g = {.q = &q};
    double shown = 0, again = 0, total = analysis_key(o, analysis_total(&q, v->profile));
    size_t nnodes = 0;
    uint32_t *nodes = NULL;
    g.node = calloc(q.a->nnodes ? q.a->nnodes : 1, sizeof *g.node);
    int rc = g.node ? sum_stacks(&q, v, &g, false, &shown) : -1;
    if (rc == 0 && !(nodes = kept_nodes(&g, o->nodefraction * total, &nnodes)))
        rc = -1;
    if (rc == 0)
        rc = sum_stacks(&q, v, &g, true, &again);
    if (rc == 0) {
        struct dot d = {out, &q, &g, total};
        print_dot(&d, src, shown, nodes, nnodes, keep_edges(&g, o->edgefraction * total));
    }
    if (rc < 0)
        mp_error_set(err, "out of memory");
    free(nodes);
    free(g.node);
    free(g.edges);
    u64map_free(&g.edge_of);
    analysis_query_fini(&q);
    return rc;
}
