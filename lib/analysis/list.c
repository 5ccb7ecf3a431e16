/* list.c - `list RE`: the source lines of matching functions with
 * the amounts attributed to each line (from DWARF file:line, so the
 * context must be at ANALYSIS_LINES granularity), printing the source text
 * when the file can be read. */
#include "lib/analysis/internal.h"
#include "lib/base/array.h"
#include "lib/base/text_escape.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define CONTEXT_LINES 2        /* source shown around the lines with data */
#define NO_GROUP UINT32_MAX

struct group {                 /* one function in one file */
    const char *function, *file;
    struct analysis_amount flat, cum;
    uint32_t stamp;
};

struct listing {
    struct analysis_amount *flat, *cum;   /* per node (one node = one line) */
    uint32_t *node_stamp, *node_group;
    uint32_t stamp_now;
    struct group *groups;
    size_t ngroups, groups_cap;
};

static void add(struct analysis_amount *to, struct analysis_amount m)
{
    to->bytes += m.bytes;
    to->objects += m.objects;
}

static uint32_t group_of(struct listing *l, const struct analysis_node *n, uint32_t id)
{
    if (l->node_group[id] != NO_GROUP)
        return l->node_group[id];
    size_t g = 0;
    while (g < l->ngroups && (l->groups[g].function != n->function || l->groups[g].file != n->file))
        g++;
    if (g == l->ngroups) {
        if (array_reserve(&l->groups, &l->groups_cap, l->ngroups + 1, sizeof *l->groups, 16))
            return NO_GROUP;
        l->groups[l->ngroups++] = (struct group){n->function, n->file, {0, 0}, {0, 0}, 0};
    }
    return l->node_group[id] = (uint32_t)g;
}

static int add_stack(struct analysis_query *q, struct listing *l, const uint32_t *ids,
                     size_t n, struct analysis_amount m)
{
    l->stamp_now++;
    for (size_t k = 0; k < n; k++) {
        uint32_t id = ids[k];
        if (!analysis_node_matches(q, QUERY_MATCH, id))
            continue;
        uint32_t g = group_of(l, &q->a->nodes[id], id);
        if (g == NO_GROUP)
            return -1;
        if (k == 0) {
            add(&l->flat[id], m);
            add(&l->groups[g].flat, m);
        }
        if (l->node_stamp[id] != l->stamp_now) {
            l->node_stamp[id] = l->stamp_now;
            add(&l->cum[id], m);
        }
        if (l->groups[g].stamp != l->stamp_now) {
            l->groups[g].stamp = l->stamp_now;
            add(&l->groups[g].cum, m);
        }
    }
    return 0;
}

static int collect(struct analysis_query *q, const struct analysis_view *v, struct listing *l)
{
    size_t nn = q->a->nnodes ? q->a->nnodes : 1;
    l->flat = calloc(nn, sizeof *l->flat);
    l->cum = calloc(nn, sizeof *l->cum);
    l->node_stamp = calloc(nn, sizeof *l->node_stamp);
    l->node_group = malloc(nn * sizeof *l->node_group);
    if (!l->flat || !l->cum || !l->node_stamp || !l->node_group)
        return -1;
    memset(l->node_group, 0xff, nn * sizeof *l->node_group);
    for (size_t i = 0; i < v->profile->nstacks; i++) {
        const uint32_t *ids;
        size_t n;
        if (!analysis_stack_nodes(q, v, i, &ids, &n))
            continue;
        if (add_stack(q, l, ids, n, analysis_stack_amount(q, v->profile, i)) < 0)
            return -1;
    }
    return 0;
}

/* ---- source files ---- */

struct source {
    char *text;
    const char **line;         /* line[i] starts line i + 1 */
    size_t nlines;
    char why[256];             /* when text is NULL */
};

static void source_load(struct source *s, const char *path)
{
    memset(s, 0, sizeof *s);
    FILE *f = path ? fopen(path, "r") : NULL;
    if (!f) {
        snprintf(s->why, sizeof s->why, "%s", path ? strerror(errno) : "no file name in the debug information");
        return;
    }
    size_t len = 0, cap = 0;
    char *text = NULL;
    if (getdelim(&text, &cap, '\0', f) < 0 && ferror(f))
        snprintf(s->why, sizeof s->why, "%s", strerror(errno));
    fclose(f);
    if (!text || s->why[0]) {
        free(text);
        if (!s->why[0])
            snprintf(s->why, sizeof s->why, "empty file");
        return;
    }
    len = strlen(text);
    for (size_t i = 0; i < len; i++)
        s->nlines += text[i] == '\n';
    s->line = malloc((s->nlines + 2) * sizeof *s->line);
    if (!s->line) {
        free(text);
        snprintf(s->why, sizeof s->why, "out of memory");
        return;
    }
    s->text = text;
    size_t n = 0;
    s->line[n++] = text;
    for (char *p = text; (p = strchr(p, '\n')); *p++ = '\0')
        if (p[1])
            s->line[n++] = p + 1;
    s->nlines = n;
}

static void source_free(struct source *s)
{
    free(s->text);
    free(s->line);
}

/* ---- output ---- */

struct line_row {
    int line;
    uint32_t node;
};

static int line_cmp(const void *pa, const void *pb)
{
    const struct line_row *a = pa, *b = pb;
    return (a->line > b->line) - (a->line < b->line);
}

static size_t group_lines(const struct analysis_query *q, const struct listing *l,
                          uint32_t g, struct line_row *rows)
{
    size_t n = 0;
    for (size_t i = 0; i < q->a->nnodes; i++)
        if (l->node_group[i] == g && (l->cum[i].bytes != 0 || l->cum[i].objects != 0))
            rows[n++] = (struct line_row){q->a->nodes[i].line, (uint32_t)i};
    qsort(rows, n, sizeof *rows, line_cmp);
    return n;
}

/* A source line for the terminal: tabs expanded to 8-column stops (the
 * file is the target's: its control bytes are escaped, tabs are not worth
 * a \x09), then escaped like every other target string. */
static const char *source_line_text(const char *text, char *buf, size_t cap)
{
    char expanded[TEXT_ESCAPE_BUF];
    size_t n = 0;
    for (const char *c = text; *c && n + 9 < sizeof expanded; c++) {
        if (*c != '\t') {
            expanded[n++] = *c;
            continue;
        }
        do
            expanded[n++] = ' ';
        while (n % 8);
    }
    expanded[n] = 0;
    const char *e = text_escape(expanded, buf, cap);
    return e == expanded ? strcpy(buf, expanded) : e;
}

static void print_line(FILE *out, const struct analysis_query *q, const struct listing *l,
                       int line, const struct line_row *row, const char *text)
{
    char f[32], c[32], tb[TEXT_ESCAPE_BUF];
    double flat = row ? analysis_key(q->opt, l->flat[row->node]) : 0;
    double cum = row ? analysis_key(q->opt, l->cum[row->node]) : 0;
    fprintf(out, "%10s %10s %6d: %s\n",
            flat ? analysis_format(q->opt, flat, false, f, sizeof f) : ".",
            cum ? analysis_format(q->opt, cum, false, c, sizeof c) : ".",
            line, text ? source_line_text(text, tb, sizeof tb) : "");
}

static void print_group(FILE *out, const struct analysis_query *q, const struct listing *l,
                        uint32_t g, const struct line_row *rows, size_t n, double total)
{
    const struct group *gr = &l->groups[g];
    char f[32], c[32], pct[16], fb[TEXT_ESCAPE_BUF], pb[TEXT_ESCAPE_BUF];
    struct source src;
    source_load(&src, gr->file);
    const char *file = gr->file ? text_escape(gr->file, pb, sizeof pb) : NULL;
    fprintf(out, "ROUTINE ====================== %s in %s\n",
            text_escape(gr->function, fb, sizeof fb), file ? file : "(unknown file)");
    fprintf(out, "%10s %10s (flat, cum) %s of the total\n",
            analysis_format(q->opt, analysis_key(q->opt, gr->flat), false, f, sizeof f),
            analysis_format(q->opt, analysis_key(q->opt, gr->cum), false, c, sizeof c),
            analysis_percent(analysis_key(q->opt, gr->cum), total, pct, sizeof pct));
    if (!src.text) {
        fprintf(out, "(source %s is not readable: %s; showing line numbers only)\n",
                file ? file : "", src.why);
        for (size_t i = 0; i < n; i++)
            print_line(out, q, l, rows[i].line, &rows[i], NULL);
        source_free(&src);
        return;
    }
    int first = rows[0].line - CONTEXT_LINES, last = rows[n - 1].line + CONTEXT_LINES;
    if (first < 1)
        first = 1;
    if (last > (int)src.nlines)
        last = (int)src.nlines;
    size_t r = 0;
    for (; r < n && rows[r].line < first; r++)   /* line 0: no line information */
        print_line(out, q, l, rows[r].line, &rows[r], "(no line information)");
    for (int line = first; line <= last; line++) {
        const struct line_row *row = r < n && rows[r].line == line ? &rows[r++] : NULL;
        print_line(out, q, l, line, row, src.line[line - 1]);
    }
    source_free(&src);
}

static json_object *json_group(const struct listing *l, uint32_t g, const struct line_row *rows, size_t n)
{
    const struct group *gr = &l->groups[g];
    struct source src;
    source_load(&src, gr->file);
    json_object *o = json_object_new_object();
    json_object_object_add(o, "function", json_object_new_string(gr->function));
    if (gr->file)
        json_object_object_add(o, "file", json_object_new_string(gr->file));
    json_object_object_add(o, "readable", json_object_new_boolean(src.text != NULL));
    analysis_json_amount(o, "flat_", gr->flat);
    analysis_json_amount(o, "cum_", gr->cum);
    json_object *arr = json_object_new_array();
    for (size_t i = 0; i < n; i++) {
        json_object *r = json_object_new_object();
        json_object_object_add(r, "line", json_object_new_int(rows[i].line));
        analysis_json_amount(r, "flat_", l->flat[rows[i].node]);
        analysis_json_amount(r, "cum_", l->cum[rows[i].node]);
        if (src.text && rows[i].line >= 1 && (size_t)rows[i].line <= src.nlines)
            json_object_object_add(r, "text", json_object_new_string(src.line[rows[i].line - 1]));
        json_object_array_add(arr, r);
    }
    json_object_object_add(o, "lines", arr);
    source_free(&src);
    return o;
}

static const struct listing *sort_listing;
static const struct analysis_options *sort_opt;

static int group_cmp(const void *pa, const void *pb)
{
    const struct group *a = &sort_listing->groups[*(const uint32_t *)pa];
    const struct group *b = &sort_listing->groups[*(const uint32_t *)pb];
    double ka = analysis_key(sort_opt, a->cum), kb = analysis_key(sort_opt, b->cum);
    if (ka != kb)
        return ka > kb ? -1 : 1;
    return strcmp(a->function, b->function);
}

static int report(struct analysis_query *q, const struct analysis_view *v,
                  const struct listing *l, const struct analysis_source *src,
                  bool json, FILE *out, struct mp_error *err)
{
    uint32_t *order = malloc((l->ngroups + 1) * sizeof *order);
    struct line_row *rows = malloc((q->a->nnodes + 1) * sizeof *rows);
    if (!order || !rows) {
        free(order);
        free(rows);
        return mp_error_set(err, "out of memory");
    }
    for (size_t g = 0; g < l->ngroups; g++)
        order[g] = (uint32_t)g;
    sort_listing = l;
    sort_opt = q->opt;
    qsort(order, l->ngroups, sizeof *order, group_cmp);
    struct analysis_amount total = analysis_total(q, v->profile);
    size_t limit = q->opt->limit > 0 && (size_t)q->opt->limit < l->ngroups
                   ? (size_t)q->opt->limit : l->ngroups;
    int rc = 0;
    json_object *j = json ? analysis_json_head(q, src, total) : NULL;
    json_object *arr = json ? json_object_new_array() : NULL;
    if (!json && l->ngroups)
        analysis_print_total(out, q, src, v->profile, total, total);
    for (size_t i = 0; i < limit; i++) {
        size_t n = group_lines(q, l, order[i], rows);
        if (json)
            json_object_array_add(arr, json_group(l, order[i], rows, n));
        else if (n)
            print_group(out, q, l, order[i], rows, n, analysis_key(q->opt, total));
    }
    if (json) {
        json_object_object_add(j, "functions", arr);
        rc = analysis_json_emit(j, out, err);
    } else if (l->ngroups == 0) {
        rc = mp_error_set(err, "no function matching '%s' holds any memory in %s; "
                          "try 'top' for the names, or a looser pattern",
                          q->opt->match, src && src->name ? src->name : "this profile");
    }
    free(order);
    free(rows);
    return rc;
}

int analysis_list(struct analysis *a, const struct analysis_view *v,
                  const struct analysis_options *o, const struct analysis_source *src,
                  bool json, FILE *out, struct mp_error *err)
{
    if (!o->match)
        return mp_error_set(err, "list needs a pattern: list REGEX, e.g. list 'leak_big'");
    if (a->granularity != ANALYSIS_LINES)
        return mp_error_set(err, "list needs line information: use an analysis context "
                            "at ANALYSIS_LINES granularity");
    struct analysis_query q;
    if (analysis_query_init(&q, a, o, &v->profile, 1, err) < 0)
        return -1;
    struct listing l = {0};
    int rc = collect(&q, v, &l);
    if (rc < 0)
        mp_error_set(err, "out of memory");
    else
        rc = report(&q, v, &l, src, json, out, err);
    free(l.flat);
    free(l.cum);
    free(l.node_stamp);
    free(l.node_group);
    free(l.groups);
    analysis_query_fini(&q);
    return rc;
}
