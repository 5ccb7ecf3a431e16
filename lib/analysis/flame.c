/* flame.c - `flame`: memory as a flame graph, either a
 * self-contained interactive SVG (a <title> tooltip per frame, and the
 * script of lib/analysis/flame_js.c for zoom and search) or Brendan Gregg's
 * collapsed stacks ("outer;...;inner 123" per line) for flamegraph.pl and
 * speedscope.
 *
 * Method (flamegraph.pl's own): every stack is copied root first, the
 * copies are sorted by their frames' names and equal neighbours merged.
 * The sorted list is then the folded text as it stands, and also the
 * graph's layout: a frame is a run of neighbours sharing a prefix, as
 * wide as their values together.  With --base, the base's stacks join the
 * merge carrying their amount as `base`: the folded text keeps the stacks
 * that grew (by how much), and the SVG is a differential flame graph:
 * frames as wide as in the newer profile, red for growth since the base
 * and blue for shrinkage. */
#include "lib/analysis/flame_js.h"
#include "lib/analysis/internal.h"
#include "lib/base/text_escape.h"

#include <math.h>
#include <string.h>

struct flame_stack {
    uint32_t start, len;       /* frames in flame.ids, outermost first */
    double value;              /* in the ranking index (bytes or objects) */
    double base;               /* the same in the --base profile */
};

struct flame {
    const struct analysis *a;
    struct flame_stack *v;
    size_t n, cap;
    uint32_t *ids;
    size_t nids, ids_cap;
    uint32_t *rank;            /* per node: its name's place in name order */
};

/* ---- stacks, sorted and merged ---- */

static int push_stack(struct flame *f, const uint32_t *innermost_first, size_t len,
                      double value, double base)
{
    if (analysis_reserve(&f->v, &f->cap, f->n + 1, sizeof *f->v) < 0 ||
        analysis_reserve(&f->ids, &f->ids_cap, f->nids + len, sizeof *f->ids) < 0)
        return -1;
    for (size_t k = 0; k < len; k++)
        f->ids[f->nids + k] = innermost_first[len - 1 - k];
    f->v[f->n++] = (struct flame_stack){(uint32_t)f->nids, (uint32_t)len, value, base};
    f->nids += len;
    return 0;
}

/* Every stack the filters keep, as value (or as base, for the base). */
static int collect(struct analysis_query *q, const struct analysis_view *v, bool is_base,
                   struct flame *f)
{
    for (size_t i = 0; i < v->profile->nstacks; i++) {
        const uint32_t *ids;
        size_t n;
        if (!analysis_stack_nodes(q, v, i, &ids, &n) || n == 0)
            continue;
        double value = analysis_key(q->opt, analysis_stack_amount(q, v->profile, i));
        if (value != 0 && push_stack(f, ids, n, is_base ? 0 : value, is_base ? value : 0) < 0)
            return -1;
    }
    return 0;
}

static int name_cmp(const void *pa, const void *pb, void *nodes)
{
    const struct analysis_node *n = nodes;
    return strcmp(n[*(const uint32_t *)pa].name, n[*(const uint32_t *)pb].name);
}

/* Rank nodes by name; nodes with the same name share a rank, so their
 * stacks merge as they would in the folded text. */
static int rank_by_name(struct flame *f)
{
    size_t nn = f->a->nnodes;
    uint32_t *order = malloc((nn ? nn : 1) * sizeof *order);
    f->rank = malloc((nn ? nn : 1) * sizeof *f->rank);
    if (!order || !f->rank) {
        free(order);
        return -1;
    }
    for (size_t i = 0; i < nn; i++)
        order[i] = (uint32_t)i;
    qsort_r(order, nn, sizeof *order, name_cmp, f->a->nodes);
    uint32_t r = 0;
    for (size_t i = 0; i < nn; i++) {
        if (i > 0 && name_cmp(&order[i - 1], &order[i], f->a->nodes) != 0)
            r++;
        f->rank[order[i]] = r;
    }
    free(order);
    return 0;
}

static int stack_cmp(const void *pa, const void *pb, void *flame)
{
    const struct flame *f = flame;
    const struct flame_stack *a = pa, *b = pb;
    uint32_t n = a->len < b->len ? a->len : b->len;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t ra = f->rank[f->ids[a->start + k]], rb = f->rank[f->ids[b->start + k]];
        if (ra != rb)
            return ra < rb ? -1 : 1;
    }
    return a->len < b->len ? -1 : a->len > b->len;
}

/* Sort, merge equal stacks, keep those with a positive value: the newer
 * profile's for a differential graph, else the growth over the base. */
static void sort_and_merge(struct flame *f, bool differential)
{
    if (f->n == 0)
        return;
    qsort_r(f->v, f->n, sizeof *f->v, stack_cmp, f);
    size_t kept = 0;
    for (size_t i = 1; i <= f->n; i++) {
        if (i < f->n && stack_cmp(&f->v[i - 1], &f->v[i], f) == 0) {
            f->v[i].value += f->v[i - 1].value;
            f->v[i].base += f->v[i - 1].base;
            continue;
        }
        struct flame_stack s = f->v[i - 1];
        if (!differential) {
            s.value -= s.base;
            s.base = 0;
        }
        /* A stack gone since the base stays, zero wide, so that its
         * callers' change counts the shrinkage. */
        if (s.value > 0 || (differential && s.base > 0))
            f->v[kept++] = s;
    }
    f->n = kept;
}

/* ---- folded text ---- */

static void put_folded_name(FILE *out, const char *name)
{
    /* Folded stacks are read by people and terminals too: control bytes
     * escaped (which also keeps line breaks out of a name). */
    char nb[TEXT_ESCAPE_BUF];
    name = text_escape(name, nb, sizeof nb);
    if (!strchr(name, ';')) {
        fputs(name, out);
        return;
    }
    /* ';' separates frames: it may not appear inside a name. */
    for (const char *c = name; *c; c++)
        putc(*c == ';' ? ':' : *c, out);
}

/* Values are rounded as a running total, so the lines add up to the
 * rounded total exactly and none is off by a whole unit. */
static void print_folded(FILE *out, const struct flame *f)
{
    double sum = 0;
    long long printed = 0;
    for (size_t i = 0; i < f->n; i++) {
        const struct flame_stack *s = &f->v[i];
        sum += s->value;
        long long upto = llround(sum);
        if (upto == printed)
            continue;
        for (uint32_t k = 0; k < s->len; k++) {
            if (k)
                putc(';', out);
            put_folded_name(out, f->a->nodes[f->ids[s->start + k]].name);
        }
        fprintf(out, " %lld\n", upto - printed);
        printed = upto;
    }
}

/* ---- layout: frames from runs of stacks sharing a prefix ---- */

#define FLAME_ALL UINT32_MAX   /* the node of the bottom frame, "all" */

struct flame_frame {
    uint32_t node, depth;      /* depth 0 is "all" */
    double x, value;           /* start and width in value units */
    double delta;              /* change since the base (differential) */
};

struct layout {
    struct flame_frame *v;
    size_t n, cap;
    double min_value;          /* narrower frames are left out */
    uint32_t max_depth;
    double max_delta;          /* the largest change of one stack, for colours */
};

/* A frame still growing to the right; x and the running change where it
 * began. */
struct open_frame {
    uint32_t node;
    double start, delta_start;
};

/* The place reached along the bottom: x, and the change summed so far. */
struct cursor {
    double x, delta;
};

static int emit(struct layout *l, uint32_t node, uint32_t depth, const struct open_frame *o,
                struct cursor at)
{
    if (at.x - o->start < l->min_value)
        return 0;
    if (analysis_reserve(&l->v, &l->cap, l->n + 1, sizeof *l->v) < 0)
        return -1;
    l->v[l->n++] = (struct flame_frame){node, depth, o->start, at.x - o->start,
                                        at.delta - o->delta_start};
    if (depth > l->max_depth)
        l->max_depth = depth;
    return 0;
}

/* Close the open frames at depths from..to-1 (innermost first) at `at`. */
static int close_frames(struct layout *l, const struct open_frame *open, size_t from,
                        size_t to, struct cursor at)
{
    for (size_t d = to; d-- > from;)
        if (emit(l, open[d].node, (uint32_t)d + 1, &open[d], at) < 0)
            return -1;
    return 0;
}

static int lay_out(const struct flame *f, struct layout *l)
{
    uint32_t longest = 0;
    for (size_t i = 0; i < f->n; i++)
        if (f->v[i].len > longest)
            longest = f->v[i].len;
    struct open_frame *open = malloc((longest + 1) * sizeof *open);
    if (!open)
        return -1;
    size_t depth = 0;
    struct cursor at = {0, 0};
    int rc = 0;
    for (size_t i = 0; i < f->n && rc == 0; i++) {
        const struct flame_stack *s = &f->v[i];
        const uint32_t *ids = f->ids + s->start;
        size_t same = 0;
        while (same < depth && same < s->len && f->rank[open[same].node] == f->rank[ids[same]])
            same++;
        rc = close_frames(l, open, same, depth, at);
        for (size_t k = same; k < s->len; k++)
            open[k] = (struct open_frame){ids[k], at.x, at.delta};
        depth = s->len;
        at.x += s->value;
        at.delta += s->value - s->base;
        l->max_delta = fmax(l->max_delta, fabs(s->value - s->base));
    }
    if (rc == 0)
        rc = close_frames(l, open, 0, depth, at);
    if (rc == 0 && at.x > 0)
        rc = emit(l, FLAME_ALL, 0, &(struct open_frame){FLAME_ALL, 0, 0}, at);
    free(open);
    return rc;
}

/* ---- SVG ---- */

/* The script (lib/analysis/flame_js.c) relies on these numbers, the frames'
 * class "f", their <title> "NAME: AMOUNT..." and the controls' ids. */
enum { SVG_PAD = 10, SVG_TOP = 70, SVG_BOTTOM = 30, SVG_FRAME_H = 16, SVG_CHAR_W = 7 };

/* A warm colour fixed by the name (FNV-1a), so a function keeps its colour
 * from one graph to the next. */
static void put_colour(FILE *out, const char *name)
{
    uint32_t h = 2166136261u;
    for (const unsigned char *c = (const unsigned char *)name; *c; c++)
        h = (h ^ *c) * 16777619u;
    fprintf(out, "rgb(%u,%u,%u)", 205 + h % 50, (h >> 8) % 230, (h >> 20) % 55);
}

/* A differential frame's colour (flamegraph.pl's scale): white for no
 * change, deeper red the more it grew and deeper blue the more it shrank,
 * measured against the largest change of a single stack; never so deep
 * that the black label cannot be read. */
static void put_change_colour(FILE *out, double delta, double max_delta)
{
    double depth = max_delta > 0 ? fmin(1, fabs(delta) / max_delta) : 0;
    unsigned pale = (unsigned)lround(70 + 140 * (1 - depth));
    if (delta > 0)
        fprintf(out, "rgb(255,%u,%u)", pale, pale);
    else if (delta < 0)
        fprintf(out, "rgb(%u,%u,255)", pale, pale);
    else
        fputs("rgb(255,255,255)", out);
}

struct svg {
    FILE *out;
    const struct analysis_query *q;
    const struct analysis_source *src;
    bool differential;
    int width, height;
    double scale;              /* pixels per value unit */
    double total;              /* what percentages are of */
    double max_delta;
};

static void put_frame(const struct svg *g, const struct flame_frame *fr)
{
    const char *name = fr->node == FLAME_ALL ? "all" : g->q->a->nodes[fr->node].name;
    double x = SVG_PAD + fr->x * g->scale, w = fr->value * g->scale;
    int y = g->height - SVG_BOTTOM - (int)(fr->depth + 1) * SVG_FRAME_H;
    char amount[32], pct[16], change[32];
    analysis_format(g->q->opt, fr->value, false, amount, sizeof amount);
    fputs("<g class=\"f\"><title>", g->out);
    text_markup_put(g->out, name, SIZE_MAX);
    fprintf(g->out, ": %s%s (%s)", amount, g->q->opt->objects ? " objects" : "",
            analysis_percent(fr->value, g->total, pct, sizeof pct));
    if (g->differential)
        fprintf(g->out, ", %s since the base",
                analysis_format(g->q->opt, fr->delta, true, change, sizeof change));
    fprintf(g->out, "</title><rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" "
            "rx=\"2\" fill=\"", x, y, w, SVG_FRAME_H - 1);
    if (g->differential)
        put_change_colour(g->out, fr->delta, g->max_delta);
    else
        put_colour(g->out, name);
    fputs("\"/>", g->out);
    size_t fits = w > 2 * SVG_CHAR_W ? (size_t)(w - 6) / SVG_CHAR_W : 0;
    if (fits >= 3) {
        fprintf(g->out, "<text x=\"%.2f\" y=\"%d\">", x + 3, y + SVG_FRAME_H - 4);
        text_markup_put(g->out, name, fits);
        fputs("</text>", g->out);
    }
    fputs("</g>\n", g->out);
}

static void put_heading(const struct svg *g, double shown)
{
    const struct analysis_options *o = g->q->opt;
    char a[32], t[32], pct[16];
    fprintf(g->out, "<text x=\"%d\" y=\"20\" text-anchor=\"middle\" font-size=\"16\">"
            "%s of %s %s: ", g->width / 2,
            g->differential ? "Differential flame graph" : "Flame graph",
            g->q->page_faults ? "faulted-in" : o->alloc ? "allocated" : "in-use",
            o->objects ? analysis_counted(g->q) : "bytes");
    if (g->src && g->src->base_name) {
        text_markup_put(g->out, g->src->base_name, SIZE_MAX);
        fputs(" to ", g->out);
    }
    const char *name = g->src && g->src->name ? g->src->name : "profile";
    text_markup_put(g->out, name, SIZE_MAX);
    fprintf(g->out, "</text>\n<text x=\"%d\" y=\"40\">Shown: %s of %s in all (%s)%s; ",
            SVG_PAD, analysis_format(o, shown, false, a, sizeof a),
            analysis_format(o, g->total, false, t, sizeof t),
            analysis_percent(shown, g->total, pct, sizeof pct),
            analysis_filtered(g->q) ? " after --focus/--ignore" : "");
    if (g->differential) {
        fputs("widths: ", g->out);
        text_markup_put(g->out, name, SIZE_MAX);
        fputs("; red: grew since ", g->out);
        text_markup_put(g->out, g->src->base_name, SIZE_MAX);
        fputs(", blue: shrank (what is gone has no width)</text>\n", g->out);
    } else {
        fputs("hover over a frame for its numbers</text>\n", g->out);
    }
    /* The controls the script brings to life; without it they do nothing. */
    fprintf(g->out, "<text id=\"unzoom\" class=\"btn hide\" x=\"%d\" y=\"60\">Reset zoom"
            "</text>\n<text id=\"search\" class=\"btn\" x=\"%d\" y=\"60\" "
            "text-anchor=\"end\">Search</text>\n<text id=\"matched\" x=\"%d\" y=\"60\" "
            "text-anchor=\"end\"></text>\n<text id=\"details\" x=\"%d\" y=\"%d\"> </text>\n",
            SVG_PAD, g->width - SVG_PAD, g->width - SVG_PAD - 100, SVG_PAD,
            g->height - SVG_BOTTOM / 2 + 4);
}

static void print_svg(FILE *out, const struct analysis_query *q,
                      const struct analysis_source *src, const struct layout *l,
                      int width, double shown, double total)
{
    struct svg g = {out, q, src, src && src->base_name, width, 0, 0, total, l->max_delta};
    g.height = SVG_TOP + (int)(l->max_depth + 1) * SVG_FRAME_H + SVG_BOTTOM;
    g.scale = shown > 0 ? (g.width - 2 * SVG_PAD) / shown : 0;
    fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" "
            "height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"Verdana, sans-serif\" "
            "font-size=\"12\" style=\"background-color: #f8f8f0\">\n<style>%s</style>\n",
            g.width, g.height, g.width, g.height, analysis_flame_css);
    put_heading(&g, shown);
    /* Outermost first, so a frame's children are drawn over it. */
    for (size_t i = l->n; i-- > 0;)
        put_frame(&g, &l->v[i]);
    fprintf(out, "<script><![CDATA[%s]]></script>\n</svg>\n", analysis_flame_script);
}

/* ---- the report ---- */

static int draw(struct analysis_query *q, const struct flame *f, const struct analysis_source *src,
                const struct analysis_flame_options *fo, double total, FILE *out)
{
    if (fo->folded) {
        print_folded(out, f);
        return 0;
    }
    double shown = 0;
    for (size_t i = 0; i < f->n; i++)
        shown += f->v[i].value;
    int width = fo->width > 0 ? fo->width : 1200;
    double min_px = fo->min_width > 0 ? fo->min_width : 0.1;
    struct layout l = {.min_value = shown * min_px / (width - 2 * SVG_PAD)};
    int rc = lay_out(f, &l);
    if (rc == 0)
        print_svg(out, q, src, &l, width, shown, total);
    free(l.v);
    return rc;
}

int analysis_flame(struct analysis *a, const struct analysis_view *v,
                   const struct analysis_view *base, const struct analysis_options *o,
                   const struct analysis_source *src, const struct analysis_flame_options *fo,
                   FILE *out, struct mp_error *err)
{
    if (fo->width != 0 && fo->width < 100)
        return mp_error_set(err, "a flame graph %d pixels wide has no room for "
                            "frames: give at least 100", fo->width);
    const struct profile *profiles[2] = {v->profile, base ? base->profile : NULL};
    struct analysis_query q;
    if (analysis_query_init(&q, a, o, profiles, base ? 2 : 1, err) < 0)
        return -1;
    struct flame f = {.a = a};
    int rc = collect(&q, v, false, &f);
    if (rc == 0 && base)
        rc = collect(&q, base, true, &f);
    if (rc == 0)
        rc = rank_by_name(&f);
    if (rc == 0) {
        sort_and_merge(&f, base && !fo->folded);
        rc = draw(&q, &f, src, fo, analysis_key(o, analysis_total(&q, v->profile)), out);
    }
    if (rc < 0)
        mp_error_set(err, "out of memory");
    free(f.v);
    free(f.ids);
    free(f.rank);
    analysis_query_fini(&q);
    return rc;
}
