/* tree.c - `tree`: the call tree from the outermost frames (a
 * trie of stacks read from the root down), each node with its cumulative
 * and flat amounts, pruned below --nodefraction of the total. */
#include "lib/analysis/internal.h"
#include "lib/base/array.h"
#include "lib/base/text_escape.h"

#include <stdlib.h>
#include <string.h>

struct tnode {
    uint32_t node;             /* analysis node id (unused for the root) */
    uint32_t first_child, next_sibling;   /* UINT32_MAX: none */
    struct analysis_amount cum, flat;
};

struct tree {
    struct tnode *v;
    size_t n, cap;
    struct u64map child;   /* (parent, node) -> tnode index */
};

static int64_t add_tnode(struct tree *t, uint32_t parent, uint32_t node)
{
    if (array_reserve(&t->v, &t->cap, t->n + 1, sizeof *t->v, 1024))
        return -1;
    t->v[t->n] = (struct tnode){node, UINT32_MAX, UINT32_MAX, {0, 0}, {0, 0}};
    if (t->n > 0) {
        t->v[t->n].next_sibling = t->v[parent].first_child;
        t->v[parent].first_child = (uint32_t)t->n;
    }
    return (int64_t)t->n++;
}

static int64_t child_of(struct tree *t, uint32_t parent, uint32_t node)
{
    uint32_t *slot = u64map_slot(&t->child, ((uint64_t)parent << 32) | node);
    if (!slot)
        return -1;
    if (*slot != U64MAP_NEW)
        return *slot;
    int64_t c = add_tnode(t, parent, node);
    if (c >= 0)
        *slot = (uint32_t)c;
    return c;
}

static void add(struct analysis_amount *to, struct analysis_amount m)
{
    to->bytes += m.bytes;
    to->objects += m.objects;
}

static int build(struct analysis_query *q, const struct analysis_view *v, struct tree *t)
{
    if (add_tnode(t, 0, 0) < 0)
        return -1;
    for (size_t i = 0; i < v->profile->nstacks; i++) {
        const uint32_t *ids;
        size_t n;
        if (!analysis_stack_nodes(q, v, i, &ids, &n) || n == 0)
            continue;
        struct analysis_amount m = analysis_stack_amount(q, v->profile, i);
        add(&t->v[0].cum, m);
        uint32_t at = 0;
        for (size_t k = n; k-- > 0;) {
            int64_t c = child_of(t, at, ids[k]);
            if (c < 0)
                return -1;
            at = (uint32_t)c;
            add(&t->v[at].cum, m);
        }
        add(&t->v[at].flat, m);
    }
    return 0;
}

/* The children worth printing, heaviest first. */
static size_t kept_children(const struct analysis_query *q, const struct tree *t,
                            uint32_t parent, double min, uint32_t **out)
{
    size_t n = 0, cap = 8;
    uint32_t *v = malloc(cap * sizeof *v);
    for (uint32_t c = t->v[parent].first_child; v && c != UINT32_MAX; c = t->v[c].next_sibling) {
        if (analysis_key(q->opt, t->v[c].cum) < min)
            continue;
        if (n == cap) {
            uint32_t *w = realloc(v, (cap *= 2) * sizeof *w);
            if (!w) {
                free(v);
                v = NULL;
                break;
            }
            v = w;
        }
        v[n++] = c;
    }
    /* Insertion sort: sibling lists are short. */
    for (size_t i = 1; v && i < n; i++) {
        uint32_t x = v[i];
        double kx = analysis_key(q->opt, t->v[x].cum);
        size_t j = i;
        for (; j > 0 && analysis_key(q->opt, t->v[v[j - 1]].cum) < kx; j--)
            v[j] = v[j - 1];
        v[j] = x;
    }
    *out = v;
    return v ? n : 0;
}

struct tree_print {
    const struct analysis_query *q;
    const struct tree *t;
    double min, total;
    FILE *out;
};

/* One line, its buffers released before the recursion goes deeper. */
static void print_line(const struct tree_print *tp, const struct tnode *x, int depth)
{
    char c[32], f[32], pct[16], nb[TEXT_ESCAPE_BUF];
    fprintf(tp->out, "%10s %6s %10s  %*s%s\n",
            analysis_format(tp->q->opt, analysis_key(tp->q->opt, x->cum), false, c, sizeof c),
            analysis_percent(analysis_key(tp->q->opt, x->cum), tp->total, pct, sizeof pct),
            analysis_format(tp->q->opt, analysis_key(tp->q->opt, x->flat), false, f, sizeof f),
            2 * depth, "", text_escape(tp->q->a->nodes[x->node].name, nb, sizeof nb));
}

static void print_text(const struct tree_print *tp, uint32_t at, int depth)
{
    uint32_t *kids;
    size_t n = kept_children(tp->q, tp->t, at, tp->min, &kids);
    for (size_t i = 0; i < n && !analysis_cancelled(); i++) {
        print_line(tp, &tp->t->v[kids[i]], depth);
        print_text(tp, kids[i], depth + 1);
    }
    free(kids);
}

static json_object *json_children(const struct tree_print *tp, uint32_t at)
{
    uint32_t *kids;
    size_t n = kept_children(tp->q, tp->t, at, tp->min, &kids);
    json_object *arr = json_object_new_array();
    for (size_t i = 0; i < n; i++) {
        const struct tnode *x = &tp->t->v[kids[i]];
        json_object *o = json_object_new_object();
        analysis_json_node(o, &tp->q->a->nodes[x->node], "function");
        analysis_json_amount(o, "cum_", x->cum);
        analysis_json_amount(o, "flat_", x->flat);
        json_object_object_add(o, "children", json_children(tp, kids[i]));
        json_object_array_add(arr, o);
    }
    free(kids);
    return arr;
}

static int report(struct analysis_query *q, const struct analysis_view *v,
                  const struct tree *t, const struct analysis_source *src,
                  bool json, FILE *out, struct mp_error *err)
{
    struct analysis_amount total = analysis_total(q, v->profile);
    double fraction = q->opt->nodefraction > 0 ? q->opt->nodefraction : 0;
    struct tree_print tp = {q, t, fraction * analysis_key(q->opt, total),
                            analysis_key(q->opt, total), out};
    if (json) {
        json_object *j = analysis_json_head(q, src, total);
        json_object_object_add(j, "nodefraction", json_object_new_double(fraction));
        json_object_object_add(j, "roots", json_children(&tp, 0));
        return analysis_json_emit(j, out, err);
    }
    analysis_print_total(out, q, src, v->profile, total, t->v[0].cum);
    fprintf(out, "%10s %6s %10s  %s (nodes under %g%% of the total left out)\n",
            "cum", "cum%", "flat", "call tree from the outermost frame", fraction * 100);
    print_text(&tp, 0, 0);
    return 0;
}

int analysis_tree(struct analysis *a, const struct analysis_view *v,
                  const struct analysis_options *o, const struct analysis_source *src,
                  bool json, FILE *out, struct mp_error *err)
{
    if (analysis_check_fraction("--nodefraction", o->nodefraction, err) < 0)
        return -1;
    struct analysis_query q;
    if (analysis_query_init(&q, a, o, &v->profile, 1, err) < 0)
        return -1;
    struct tree t = {0};
    int rc = build(&q, v, &t);
    if (rc < 0)
        mp_error_set(err, "out of memory");
    else
        rc = report(&q, v, &t, src, json, out, err);
    free(t.v);
    u64map_free(&t.child);
    analysis_query_fini(&q);
    return rc;
}
