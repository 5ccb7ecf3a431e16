/* test_pictures.c - flame (SVG and folded) and graph (DOT) on profiles
 * written as heap_v2 text, with a symbol table where the address's 4 KiB
 * page names the function: exact folded lines and rounding, growth, the
 * SVG's structure (frames nested, widths per level within the total),
 * escaping, pruning, the DOT's nodes, edges and weights. */
#include "tests/unit/unit.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lib/analysis/analysis.h"

/* The function at address A is names[A >> 12]: 0x1001 and 0x1801 are two
 * call sites in main. */
static const char *const names[] = {
    "?", "main", "alpha", "leaf", "beta", "recurse",
    "op<T>&\"q\"'",            /* 6: every XML markup character */
    "bad\xff\xfe" "name",      /* 7: not UTF-8 */
    "back\\slash\"quote",      /* 8: DOT escapes */
    "a_very_long_function_name",
};
#define NNAMES (sizeof names / sizeof *names)

static int page_resolve(void *cookie, const struct profile *p, uint64_t addr,
                        enum symbolize_detail detail, struct symbol_frame *frames, int max)
{
    (void)cookie, (void)p, (void)detail, (void)max;
    uint64_t page = addr >> 12;
    frames[0] = (struct symbol_frame){
        .function = names[page < NNAMES ? page : 0], .object = "/bin/test",
        .object_offset = addr,
    };
    return 1;
}

#define MAPS "\nMAPPED_LIBRARIES:\n"

/* main -> alpha -> leaf: 100 + 50 (two call sites), main -> beta: 30,
 * main itself: 5; thread 1 holds the 30. */
static const char three_paths[] =
    "heap_v2/0\n"
    "@ 0x3001 0x2001 0x1001\n  t*: 1: 100 [0: 0]\n  t0: 1: 100 [0: 0]\n"
    "@ 0x3001 0x2001 0x1801\n  t*: 2: 50 [0: 0]\n  t0: 2: 50 [0: 0]\n"
    "@ 0x4001 0x1001\n  t*: 3: 30 [0: 0]\n  t1: 3: 30 [0: 0]\n"
    "@ 0x1001\n  t*: 1: 5 [0: 0]\n  t0: 1: 5 [0: 0]\n" MAPS;

static struct analysis *ctx;
static struct profile *profiles[2];
static char *out;
static size_t outlen;
static struct mp_error err;

static struct profile *parse(int slot, const char *text)
{
    profiles[slot] = profile_parse(text, strlen(text), "test.heap", &err);
    ck_assert_msg(profiles[slot] != NULL, "%s", err.msg);
    return profiles[slot];
}

static void setup(void)
{
    ctx = analysis_new(ANALYSIS_FUNCTIONS, page_resolve, NULL);
}

static void teardown(void)
{
    for (int i = 0; i < 2; i++) {
        if (profiles[i]) {
            analysis_forget(ctx, profiles[i]);
            profile_free(profiles[i]);
            profiles[i] = NULL;
        }
    }
    analysis_free(ctx);
    free(out);
    out = NULL;
}

/* ---- running the pictures into `out` ---- */

static int flame(struct profile *p, struct profile *base, const struct analysis_options *o,
                 const struct analysis_flame_options *fo)
{
    const struct analysis_view *v = analysis_view(ctx, p, &err);
    const struct analysis_view *vb = base ? analysis_view(ctx, base, &err) : NULL;
    ck_assert_ptr_nonnull(v);
    struct analysis_source src = {"new<1>", base ? "old" : NULL};
    free(out);
    FILE *f = open_memstream(&out, &outlen);
    int rc = analysis_flame(ctx, v, vb, o, &src, fo, f, &err);
    fclose(f);
    return rc;
}

static const char *folded(struct profile *p, struct profile *base, const struct analysis_options *o)
{
    struct analysis_flame_options fo = {.folded = true};
    ck_assert_msg(flame(p, base, o, &fo) == 0, "%s", err.msg);
    return out;
}

static const char *graph(struct profile *p, const struct analysis_options *o)
{
    const struct analysis_view *v = analysis_view(ctx, p, &err);
    ck_assert_ptr_nonnull(v);
    struct analysis_source src = {"d1", NULL};
    free(out);
    FILE *f = open_memstream(&out, &outlen);
    int rc = analysis_graph(ctx, v, o, &src, f, &err);
    fclose(f);
    ck_assert_msg(rc == 0, "%s", err.msg);
    return out;
}

/* ---- folded ---- */

START_TEST(folded_lines_sorted_and_merged)
{
    struct analysis_options o = {0};
    ck_assert_str_eq(folded(parse(0, three_paths), NULL, &o),
                     "main 5\n"
                     "main;alpha;leaf 150\n"
                     "main;beta 30\n");
}
END_TEST

START_TEST(folded_objects_focus_hide_thread)
{
    struct profile *p = parse(0, three_paths);
    struct analysis_options o = {.objects = true};
    ck_assert_str_eq(folded(p, NULL, &o), "main 1\nmain;alpha;leaf 3\nmain;beta 3\n");
    o = (struct analysis_options){.focus = "^beta$"};
    ck_assert_str_eq(folded(p, NULL, &o), "main;beta 30\n");
    o = (struct analysis_options){.ignore = "beta"};
    ck_assert_str_eq(folded(p, NULL, &o), "main 5\nmain;alpha;leaf 150\n");
    /* alpha hidden: leaf is called by main directly. */
    o = (struct analysis_options){.hide = "^alpha$"};
    ck_assert_str_eq(folded(p, NULL, &o), "main 5\nmain;beta 30\nmain;leaf 150\n");
    o = (struct analysis_options){.has_thread = true, .thread = 1};
    ck_assert_str_eq(folded(p, NULL, &o), "main;beta 30\n");
}
END_TEST

START_TEST(folded_rounds_to_the_exact_total)
{
    struct profile *p = parse(0, "heap_v2/0\n"
                              "@ 0x2001 0x1001\n  t*: 1: 1 [0: 0]\n"
                              "@ 0x3001 0x1001\n  t*: 1: 1 [0: 0]\n"
                              "@ 0x4001 0x1001\n  t*: 1: 1 [0: 0]\n" MAPS);
    for (size_t i = 0; i < 3; i++)
        p->stacks[i].v.inuse_bytes = 10.4;   /* unsampled values are fractional */
    struct analysis_options o = {0};
    const char *text = folded(p, NULL, &o);
    long sum = 0, line;
    int n = 0;
    for (const char *c = text; (c = strchr(c, ' ')); c++, n++) {
        line = strtol(c + 1, NULL, 10);
        ck_assert_msg(fabs(line - 10.4) < 1, "line value %ld is not 10.4 rounded", line);
        sum += line;
    }
    ck_assert_int_eq(n, 3);
    ck_assert_int_eq(sum, 31);   /* 31.2; rounding each line alone gives 30 */
}
END_TEST

START_TEST(folded_growth_keeps_what_grew)
{
    struct profile *old = parse(1, "heap_v2/0\n"
                                "@ 0x3001 0x2001 0x1001\n  t*: 1: 40 [0: 0]\n"
                                "@ 0x4001 0x1001\n  t*: 1: 70 [0: 0]\n"
                                "@ 0x5001 0x1001\n  t*: 1: 9 [0: 0]\n" MAPS);
    struct profile *now = parse(0, three_paths);
    struct analysis_options o = {0};
    /* leaf +110, beta -40 (left out), main +5 (new), recurse -9 (gone). */
    ck_assert_str_eq(folded(now, old, &o), "main 5\nmain;alpha;leaf 110\n");
}
END_TEST

START_TEST(folded_names_cannot_break_lines)
{
    static const char *const tricky[] = {"semi;colon", "new\nline"};
    struct profile *p = parse(0, "heap_v2/0\n@ 0x1001\n  t*: 1: 7 [0: 0]\n"
                              "@ 0x2001\n  t*: 1: 8 [0: 0]\n" MAPS);
    const struct analysis_view *v = analysis_view(ctx, p, &err);
    ck_assert_ptr_nonnull(v);
    /* Rename the two nodes the view made (names are the context's). */
    ck_assert_int_eq(ctx->nnodes, 2);
    ctx->nodes[0].name = tricky[0];
    ctx->nodes[1].name = tricky[1];
    struct analysis_options o = {0};
    /* The line break shows escaped, as in every human-readable output. */
    ck_assert_str_eq(folded(p, NULL, &o), "new\\x0aline 8\nsemi:colon 7\n");
}
END_TEST

/* ---- SVG ---- */

struct rect {
    double x, width;
    int y;
};

/* Every <rect> of the SVG, in order. */
static int rects(const char *svg, struct rect *r, int max)
{
    int n = 0;
    for (const char *c = svg; (c = strstr(c, "<rect ")); c++) {
        ck_assert_int_lt(n, max);
        ck_assert_int_eq(sscanf(c, "<rect x=\"%lf\" y=\"%d\" width=\"%lf\"",
                                &r[n].x, &r[n].y, &r[n].width), 3);
        n++;
    }
    return n;
}

static int count(const char *s, const char *what)
{
    int n = 0;
    for (const char *c = s; (c = strstr(c, what)); c += strlen(what))
        n++;
    return n;
}

START_TEST(svg_frames_nest_within_the_total)
{
    struct analysis_flame_options fo = {.width = 1000};
    struct analysis_options o = {0};
    ck_assert_int_eq(flame(parse(0, three_paths), NULL, &o, &fo), 0);
    ck_assert(strncmp(out, "<?xml", 5) == 0);
    ck_assert(strcmp(out + outlen - 7, "</svg>\n") == 0);
    ck_assert_int_eq(count(out, "<g class=\"f\">"), count(out, "</g>"));
    /* One self-contained file: its script and style inline, nothing fetched. */
    ck_assert_int_eq(count(out, "<script><![CDATA["), 1);
    ck_assert_int_eq(count(out, "]]>"), 1);
    ck_assert_ptr_null(strstr(out, "href"));
    ck_assert_ptr_null(strstr(out, "http://www.w3.org/1999/xlink"));
    ck_assert_ptr_null(strstr(out, "innerHTML"));
    struct rect r[16];
    int n = rects(out, r, 16);
    ck_assert_int_eq(n, 5);   /* all, main, alpha, leaf, beta */
    ck_assert_int_eq(count(out, "<title>"), 5);
    /* The bottom frame ("all") spans the drawing: 1000 - 2 * 10 pixels. */
    int bottom = r[0].y;
    for (int i = 0; i < n; i++)
        bottom = r[i].y > bottom ? r[i].y : bottom;
    for (int i = 0; i < n; i++) {
        double level = 0;
        for (int j = 0; j < n; j++)
            level += r[j].y == r[i].y ? r[j].width : 0;
        ck_assert_msg(level <= 980 + 0.05, "level y=%d is %g px wide", r[i].y, level);
        if (r[i].y == bottom) {
            ck_assert_double_eq_tol(r[i].width, 980, 0.01);
            continue;
        }
        /* Every other frame stands on one a level below it. */
        bool on_parent = false;
        for (int j = 0; j < n; j++)
            on_parent |= r[j].y == r[i].y + 16 && r[j].x <= r[i].x + 0.01 &&
                         r[j].x + r[j].width >= r[i].x + r[i].width - 0.01;
        ck_assert_msg(on_parent, "frame at x=%g y=%d floats", r[i].x, r[i].y);
    }
    ck_assert_ptr_nonnull(strstr(out, "<title>leaf: 150 B (81.1%)</title>"));
    ck_assert_ptr_nonnull(strstr(out, "<title>all: 185 B (100.0%)</title>"));
    ck_assert_ptr_nonnull(strstr(out, "new&lt;1&gt;"));   /* the dump name too */
}
END_TEST

START_TEST(svg_widths_follow_values)
{
    struct analysis_flame_options fo = {.width = 1000};
    struct analysis_options o = {0};
    ck_assert_int_eq(flame(parse(0, three_paths), NULL, &o, &fo), 0);
    /* leaf: 150 of 185 of 980 px. */
    const char *leaf = strstr(out, "<title>leaf:");
    ck_assert_ptr_nonnull(leaf);
    struct rect r;
    ck_assert_int_eq(rects(strstr(leaf, "<rect "), &r, 1), 1);
    ck_assert_double_eq_tol(r.width, 980.0 * 150 / 185, 0.01);
    /* --objects: leaf holds 3 of 7 objects. */
    o.objects = true;
    ck_assert_int_eq(flame(profiles[0], NULL, &o, &fo), 0);
    leaf = strstr(out, "<title>leaf: 3 objects");
    ck_assert_ptr_nonnull(leaf);
    ck_assert_int_eq(rects(strstr(leaf, "<rect "), &r, 1), 1);
    ck_assert_double_eq_tol(r.width, 980.0 * 3 / 7, 0.01);
}
END_TEST

START_TEST(svg_narrow_frames_left_out)
{
    /* beta is 30 of 185 B: 159 px of 980, main alone 5 B: 26 px. */
    struct analysis_options o = {0};
    struct analysis_flame_options fo = {.width = 1000, .min_width = 100};
    ck_assert_int_eq(flame(parse(0, three_paths), NULL, &o, &fo), 0);
    ck_assert_ptr_nonnull(strstr(out, "<title>beta:"));
    fo.min_width = 200;
    ck_assert_int_eq(flame(profiles[0], NULL, &o, &fo), 0);
    ck_assert_ptr_null(strstr(out, "<title>beta:"));
    ck_assert_ptr_nonnull(strstr(out, "<title>leaf:"));
    struct rect r[8];
    ck_assert_int_eq(rects(out, r, 8), 4);
}
END_TEST

START_TEST(svg_escapes_names)
{
    struct profile *p = parse(0, "heap_v2/0\n@ 0x6001 0x1001\n  t*: 1: 64 [0: 0]\n"
                              "@ 0x7001 0x1001\n  t*: 1: 64 [0: 0]\n" MAPS);
    struct analysis_options o = {0};
    struct analysis_flame_options fo = {0};
    ck_assert_int_eq(flame(p, NULL, &o, &fo), 0);
    ck_assert_ptr_nonnull(strstr(out, "<title>op&lt;T&gt;&amp;&quot;q&quot;&apos;: 64 B"));
    ck_assert_ptr_null(strstr(out, "op<T>"));
    ck_assert_ptr_null(strstr(out, "&\"q"));
    /* Broken UTF-8 would make the file unreadable: replaced. */
    ck_assert_ptr_nonnull(strstr(out, "<title>bad??name: 64 B"));
    ck_assert_ptr_null(strchr(out, '\xff'));
}
END_TEST

START_TEST(svg_labels_cut_to_fit)
{
    /* leaf gets 4 of 1180 px: no label; main the whole width: a label. */
    struct profile *p = parse(0, "heap_v2/0\n@ 0x3001 0x1001\n  t*: 1: 1 [0: 0]\n"
                              "@ 0x9001 0x1001\n  t*: 1: 299 [0: 0]\n" MAPS);
    struct analysis_options o = {0};
    struct analysis_flame_options fo = {0};
    ck_assert_int_eq(flame(p, NULL, &o, &fo), 0);
    ck_assert_ptr_nonnull(strstr(out, ">main</text>"));
    ck_assert_ptr_nonnull(strstr(out, ">a_very_long_function_name</text>"));
    ck_assert_ptr_null(strstr(out, ">leaf</text>"));
    ck_assert_ptr_nonnull(strstr(out, "<title>leaf:"));
    /* 100 px wide leaves 80 px, room for 10 characters: cut, ending "..". */
    fo.width = 100;
    ck_assert_int_eq(flame(p, NULL, &o, &fo), 0);
    ck_assert_ptr_nonnull(strstr(out, ">a_very_l..</text>"));
    ck_assert_ptr_nonnull(strstr(out, "<title>a_very_long_function_name:"));
}
END_TEST

START_TEST(svg_differential_and_errors)
{
    /* Since the base: beta grew by 20, main -> alpha -> leaf shrank from
     * 300 to 150, main alone is new (+5), and a_very_long_function_name's
     * 40 are gone. */
    struct profile *old = parse(1, "heap_v2/0\n@ 0x4001 0x1001\n  t*: 1: 10 [0: 0]\n"
                                "@ 0x3001 0x2001 0x1001\n  t*: 1: 300 [0: 0]\n"
                                "@ 0x9001 0x1001\n  t*: 1: 40 [0: 0]\n" MAPS);
    struct profile *now = parse(0, three_paths);
    struct analysis_options o = {0};
    struct analysis_flame_options fo = {0};
    ck_assert_int_eq(flame(now, old, &o, &fo), 0);
    ck_assert_ptr_nonnull(strstr(out, "Differential flame graph"));
    /* widths from the newer profile, the change beside them, coloured
     * against the largest change of one stack (150): */
    ck_assert_ptr_nonnull(strstr(out, "<title>beta: 30 B (16.2%), +20 B since the base"
                                      "</title><rect "));
    ck_assert_ptr_nonnull(strstr(strstr(out, "<title>beta:"), "fill=\"rgb(255,191,191)\""));
    ck_assert_ptr_nonnull(strstr(out, "<title>leaf: 150 B (81.1%), -150 B since the base"));
    ck_assert_ptr_nonnull(strstr(strstr(out, "<title>leaf:"), "fill=\"rgb(70,70,255)\""));
    /* what is gone has no width, but its callers count its loss */
    ck_assert_ptr_null(strstr(out, "<title>a_very_long_function_name"));
    ck_assert_ptr_nonnull(strstr(out, "<title>main: 185 B (100.0%), -165 B since the base"));
    ck_assert_ptr_nonnull(strstr(out, "<title>all: 185 B (100.0%), -165 B since the base"));
    struct rect r[16];
    ck_assert_int_ge(rects(strstr(strstr(out, "<title>beta:"), "<rect "), r, 16), 1);
    ck_assert_double_eq_tol(r[0].width, 1180.0 * 30 / 185, 0.01);
    /* folded text with --base stays the growth only */
    const char *text = folded(now, old, &o);
    ck_assert_ptr_nonnull(strstr(text, "main;beta 20\n"));
    ck_assert_ptr_nonnull(strstr(text, "main 5\n"));
    ck_assert_ptr_null(strstr(text, "leaf"));
    fo.width = 50;
    ck_assert_int_eq(flame(now, NULL, &o, &fo), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "at least 100"));
    fo.width = 0;
    o.focus = "(";
    ck_assert_int_eq(flame(now, NULL, &o, &fo), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "--focus"));
}
END_TEST

/* ---- DOT ---- */

/* The DOT id of the node named name ("N3"), asserting it is there. */
static const char *node_id(const char *dot, const char *name)
{
    static char id[16];
    char pattern[128];
    snprintf(pattern, sizeof pattern, " [label=\"%s\\n", name);
    const char *at = strstr(dot, pattern);
    ck_assert_msg(at != NULL, "no node %s in:\n%s", name, dot);
    const char *start = at;
    while (start > dot && start[-1] != ' ')
        start--;
    snprintf(id, sizeof id, "%.*s", (int)(at - start), start);
    return id;
}

/* The line of the edge from -> to, from its "[label=\"" on, or NULL. */
static const char *edge_line(const char *dot, const char *from, const char *to)
{
    char f[16], pattern[64];
    snprintf(f, sizeof f, "%s", node_id(dot, from));
    snprintf(pattern, sizeof pattern, "  %s -> %s [label=\"", f, node_id(dot, to));
    const char *at = strstr(dot, pattern);
    return at ? strstr(at, "[label=\"") : NULL;
}

/* The label of the edge from -> to, or NULL. */
static const char *edge_label(const char *dot, const char *from, const char *to)
{
    static char label[32];
    const char *at = edge_line(dot, from, to);
    if (!at)
        return NULL;
    ck_assert_int_eq(sscanf(at, "[label=\"%31[^\"]", label), 1);
    return label;
}

START_TEST(dot_nodes_edges_and_weights)
{
    struct analysis_options o = {.exact = true};
    const char *dot = graph(parse(0, three_paths), &o);
    ck_assert(strncmp(dot, "digraph \"memprof\" {\n", 20) == 0);
    ck_assert_int_eq(count(dot, " [label="), 4 + 3);   /* nodes, edges */
    ck_assert_ptr_nonnull(strstr(dot, "[label=\"leaf\\nflat 150 (81.1%)\\ncum 150 (81.1%)\""));
    ck_assert_ptr_nonnull(strstr(dot, "[label=\"main\\nflat 5 (2.7%)\\ncum 185 (100.0%)\""));
    ck_assert_str_eq(node_id(dot, "leaf"), "N1");   /* heaviest flat first */
    ck_assert_str_eq(edge_label(dot, "main", "alpha"), "150");
    ck_assert_str_eq(edge_label(dot, "alpha", "leaf"), "150");
    ck_assert_str_eq(edge_label(dot, "main", "beta"), "30");
    ck_assert_ptr_null(edge_label(dot, "alpha", "main"));
    ck_assert_ptr_null(edge_label(dot, "main", "leaf"));
}
END_TEST

START_TEST(dot_recursion_counts_once)
{
    /* main -> recurse -> recurse -> recurse -> leaf, and main -> alpha ->
     * beta -> alpha -> beta -> leaf: every edge once per stack. */
    struct profile *p = parse(0, "heap_v2/0\n"
                              "@ 0x3001 0x5001 0x5001 0x5001 0x1001\n  t*: 1: 64 [0: 0]\n"
                              "@ 0x3001 0x4001 0x2001 0x4001 0x2001 0x1001\n  t*: 1: 8 [0: 0]\n"
                              MAPS);
    struct analysis_options o = {.exact = true};
    const char *dot = graph(p, &o);
    ck_assert_ptr_nonnull(strstr(dot, "[label=\"recurse\\nflat 0 (0.0%)\\ncum 64 (88.9%)\""));
    ck_assert_ptr_nonnull(strstr(dot, "[label=\"alpha\\nflat 0 (0.0%)\\ncum 8 (11.1%)\""));
    ck_assert_str_eq(edge_label(dot, "main", "recurse"), "64");
    ck_assert_str_eq(edge_label(dot, "recurse", "leaf"), "64");
    ck_assert_ptr_null(edge_label(dot, "recurse", "recurse"));
    ck_assert_str_eq(edge_label(dot, "alpha", "beta"), "8");
    ck_assert_str_eq(edge_label(dot, "beta", "alpha"), "8");
    ck_assert_str_eq(edge_label(dot, "beta", "leaf"), "8");
    ck_assert_int_eq(count(dot, " -> "), 6);
}
END_TEST

START_TEST(dot_pruning)
{
    struct profile *p = parse(0, three_paths);
    /* Nodes under 20% of 185 B (37 B): beta (30) goes, and its edge. */
    struct analysis_options o = {.exact = true, .nodefraction = 0.2};
    const char *dot = graph(p, &o);
    ck_assert_ptr_null(strstr(dot, "beta"));
    ck_assert_int_eq(count(dot, " -> "), 2);
    ck_assert_ptr_nonnull(strstr(dot, "3 nodes (under 37 left out), 2 edges"));
    /* Edges under 50% (92.5 B): only the two of 150 B stay. */
    o = (struct analysis_options){.exact = true, .edgefraction = 0.5};
    dot = graph(p, &o);
    ck_assert_ptr_nonnull(strstr(dot, "beta"));
    ck_assert_ptr_null(edge_label(dot, "main", "beta"));
    ck_assert_int_eq(count(dot, " -> "), 2);
}
END_TEST

/* The attributes after the label of the edge from -> to. */
static const char *edge_attrs(const char *dot, const char *from, const char *to)
{
    static char attrs[256];
    const char *at = edge_line(dot, from, to);
    ck_assert_msg(at != NULL, "no edge %s -> %s in:\n%s", from, to, dot);
    ck_assert_int_eq(sscanf(at, "%255[^\n]", attrs), 1);
    return attrs;
}

START_TEST(dot_residual_edges_dotted)
{
    /* main -> alpha -> leaf 10, main -> beta -> leaf 100: at 20% (22 B)
     * alpha goes, and its path becomes a dotted main -> leaf of 10. */
    struct profile *p = parse(0, "heap_v2/0\n"
                              "@ 0x3001 0x2001 0x1001\n  t*: 1: 10 [0: 0]\n"
                              "@ 0x3001 0x4001 0x1001\n  t*: 1: 100 [0: 0]\n" MAPS);
    struct analysis_options o = {.exact = true, .nodefraction = 0.2};
    const char *dot = graph(p, &o);
    ck_assert_ptr_null(strstr(dot, "alpha"));
    ck_assert_str_eq(edge_label(dot, "main", "leaf"), "10");
    ck_assert_ptr_nonnull(strstr(edge_attrs(dot, "main", "leaf"), "style=dotted"));
    ck_assert_str_eq(edge_label(dot, "main", "beta"), "100");
    ck_assert_ptr_null(strstr(edge_attrs(dot, "main", "beta"), "dotted"));
    ck_assert_ptr_null(strstr(edge_attrs(dot, "beta", "leaf"), "dotted"));
    ck_assert_int_eq(count(dot, " -> "), 3);
    ck_assert_ptr_nonnull(strstr(dot, "dotted edge: a path through nodes left out"));
    /* Without pruning the same profile has no residual edge. */
    o.nodefraction = 0;
    dot = graph(p, &o);
    ck_assert_ptr_null(strstr(dot, "style=dotted"));
    ck_assert_ptr_null(edge_label(dot, "main", "leaf"));
}
END_TEST

START_TEST(dot_colours_by_weight)
{
    /* pprof's scale: all of the total is a red outline on a pale red
     * fill; a sliver is grey; shares between go through orange. */
    const char *dot = graph(parse(0, three_paths), &(struct analysis_options){.exact = true});
    const char *main_node = strstr(dot, "[label=\"main\\n");
    ck_assert_ptr_nonnull(main_node);
    ck_assert(strncmp(strstr(main_node, "style="), "style=filled, color=\"#b20000\", "
                      "fillcolor=\"#edd5d5\"]", 48) == 0);
    /* beta: 30/185 = 0.16 < 0.2, so desaturated toward grey */
    const char *beta = strstr(dot, "[label=\"beta\\n");
    ck_assert_ptr_nonnull(beta);
    unsigned r, g, b;
    const char *c = strstr(beta, "color=\"#");
    ck_assert_ptr_nonnull(c);
    ck_assert_int_eq(sscanf(c, "color=\"#%2x%2x%2x", &r, &g, &b), 3);
    ck_assert_uint_eq(r, 178);
    ck_assert(g > 60 && g < 178 && b > 20 && b < g);
    /* edges: the heavier one is redder */
    unsigned g150, g30;
    ck_assert_int_eq(sscanf(strstr(edge_attrs(dot, "main", "alpha"), "color=\"#"),
                            "color=\"#%*2x%2x", &g150), 1);
    ck_assert_int_eq(sscanf(strstr(edge_attrs(dot, "main", "beta"), "color=\"#"),
                            "color=\"#%*2x%2x", &g30), 1);
    ck_assert_uint_lt(g150, g30);
    /* an empty profile colours nothing and divides by nothing */
    dot = graph(parse(1, "heap_v2/0\n" MAPS), &(struct analysis_options){0});
    ck_assert_ptr_null(strstr(dot, "nan"));
}
END_TEST

START_TEST(dot_escapes_and_errors)
{
    struct profile *p = parse(0, "heap_v2/0\n@ 0x8001 0x1001\n  t*: 1: 9 [0: 0]\n" MAPS);
    struct analysis_options o = {0};
    const char *dot = graph(p, &o);
    ck_assert_ptr_nonnull(strstr(dot, "[label=\"back\\\\slash\\\"quote\\n"));
    o.edgefraction = 2;
    const struct analysis_view *v = analysis_view(ctx, p, &err);
    free(out);
    FILE *f = open_memstream(&out, &outlen);
    ck_assert_int_eq(analysis_graph(ctx, v, &o, NULL, f, &err), -1);
    fclose(f);
    ck_assert_ptr_nonnull(strstr(err.msg, "--edgefraction 2 is not a fraction"));
}
END_TEST

static Suite *pictures_suite(void)
{
    Suite *s = suite_create("pictures");
    TCase *tc = tcase_create("flame and graph");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, folded_lines_sorted_and_merged);
    tcase_add_test(tc, folded_objects_focus_hide_thread);
    tcase_add_test(tc, folded_rounds_to_the_exact_total);
    tcase_add_test(tc, folded_growth_keeps_what_grew);
    tcase_add_test(tc, folded_names_cannot_break_lines);
    tcase_add_test(tc, svg_frames_nest_within_the_total);
    tcase_add_test(tc, svg_widths_follow_values);
    tcase_add_test(tc, svg_narrow_frames_left_out);
    tcase_add_test(tc, svg_escapes_names);
    tcase_add_test(tc, svg_labels_cut_to_fit);
    tcase_add_test(tc, svg_differential_and_errors);
    tcase_add_test(tc, dot_nodes_edges_and_weights);
    tcase_add_test(tc, dot_recursion_counts_once);
    tcase_add_test(tc, dot_pruning);
    tcase_add_test(tc, dot_residual_edges_dotted);
    tcase_add_test(tc, dot_colours_by_weight);
    tcase_add_test(tc, dot_escapes_and_errors);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(pictures_suite)
