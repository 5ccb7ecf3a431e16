/* glibc_info.c - the parser of glibc's malloc_info XML: a small tag scanner
 * of its own (no XML library) and the few elements memprof reads from it.
 *
 * glibc prints, with no prolog and whitespace between tags:
 *   <malloc version="1">
 *   <heap nr="0"> <sizes>...</sizes> <total type="fast|rest" count= size=/>
 *     <system type="current|max" size=/> <aspace type="total|mprotect" size=/>
 *     [<aspace type="subheaps" size=/>] </heap> ...
 *   <total type="fast|rest|mmap" count= size=/> <system .../> <aspace .../>
 *   </malloc>
 * Open elements are kept on a fixed stack (no recursion on the input's
 * depth); every element is checked to close, and only those at the places
 * above are read: the rest are skipped, whatever they hold. */
#include "lib/mallinfo/glibc_info.h"

#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/base/array.h"

/* A piece of the input; p is NULL when absent. */
struct span {
    const char *p;
    size_t n;
};

/* The values memprof reads, in a heap or in the totals. */
enum field { F_FAST, F_REST, F_MMAP, F_SYS_CUR, F_SYS_MAX, F_AS_TOTAL, F_AS_MPROTECT, NFIELDS };

static const struct {
    const char *elem, *type;
    bool counted;       /* has count= besides size= */
} fields[NFIELDS] = {
    [F_FAST] = { "total", "fast", true },
    [F_REST] = { "total", "rest", true },
    [F_MMAP] = { "total", "mmap", true },
    [F_SYS_CUR] = { "system", "current", false },
    [F_SYS_MAX] = { "system", "max", false },
    [F_AS_TOTAL] = { "aspace", "total", false },
    [F_AS_MPROTECT] = { "aspace", "mprotect", false },
};

#define TOTAL_FIELDS ((1u << NFIELDS) - 1)
#define HEAP_FIELDS (TOTAL_FIELDS & ~(1u << F_MMAP))

/* One tag, with the attributes memprof knows (others are skipped). */
struct tag {
    size_t at;                  /* offset of its '<' */
    bool closing, empty;        /* </name>, <name/> */
    struct span name;
    struct span version, nr, type, count, size;
};

static const struct {
    const char *name;
    size_t off;
} known_attrs[] = {
    { "version", offsetof(struct tag, version) },
    { "nr", offsetof(struct tag, nr) },
    { "type", offsetof(struct tag, type) },
    { "count", offsetof(struct tag, count) },
    { "size", offsetof(struct tag, size) },
};

/* The values read in one heap, or in the totals. */
struct scope {
    uint64_t v[NFIELDS][2];     /* count, size */
    unsigned seen;              /* bit per field */
};

struct parser {
    const char *s;
    size_t len, pos;
    struct span open[GLIBC_INFO_MAX_DEPTH];     /* names of open elements */
    size_t depth;
    bool in_heap, done;
    unsigned heap_nr;
    size_t cap;
    struct scope heap, total;
    struct glibc_malloc_info *out;
    struct mp_error *err;
};

static int fail(struct parser *p, size_t at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(struct parser *p, size_t at, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return mp_error_set(p->err, "malloc_info output, byte %zu: %s", at, what);
}

static bool span_is(struct span a, const char *s)
{
    return a.p && a.n == strlen(s) && memcmp(a.p, s, a.n) == 0;
}

static bool span_eq(struct span a, struct span b)
{
    return a.n == b.n && memcmp(a.p, b.p, a.n) == 0;
}

/* ---- the tag scanner ---- */

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Skips whitespace; says whether there was any. */
static bool skip_space(struct parser *p)
{
    size_t from = p->pos;
    while (p->pos < p->len && is_space(p->s[p->pos]))
        p->pos++;
    return p->pos > from;
}

static bool name_char(char c, bool first)
{
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':')
        return true;
    return !first && ((c >= '0' && c <= '9') || c == '-' || c == '.');
}

/* An XML name (ASCII only: glibc prints nothing else). */
static int scan_name(struct parser *p, struct span *out)
{
    size_t from = p->pos;
    while (p->pos < p->len && name_char(p->s[p->pos], p->pos == from))
        p->pos++;
    *out = (struct span){ p->s + from, p->pos - from };
    return p->pos > from ? 0 : -1;
}

static int expect(struct parser *p, char c, const char *what)
{
    if (p->pos >= p->len)
        return fail(p, p->pos, "the output ends inside a tag (truncated?)");
    if (p->s[p->pos] != c)
        return fail(p, p->pos, "expected %s", what);
    p->pos++;
    return 0;
}

/* Keeps the value of an attribute memprof knows; a repeated one is an
 * error, as in XML. */
static int keep_attr(struct parser *p, struct tag *t, struct span name, struct span val)
{
    for (size_t i = 0; i < sizeof known_attrs / sizeof known_attrs[0]; i++) {
        if (!span_is(name, known_attrs[i].name))
            continue;
        struct span *slot = (struct span *)((char *)t + known_attrs[i].off);
        if (slot->p)
            return fail(p, (size_t)(name.p - p->s), "attribute %s given twice",
                        known_attrs[i].name);
        *slot = val;
    }
    return 0;
}

/* name = "value" (or 'value'). */
static int scan_attr(struct parser *p, struct tag *t)
{
    struct span name;
    if (scan_name(p, &name) < 0)
        return fail(p, p->pos, "expected an attribute name or the end of the tag");
    skip_space(p);
    if (expect(p, '=', "'=' after an attribute name") < 0)
        return -1;
    skip_space(p);
    if (p->pos >= p->len)
        return fail(p, p->pos, "the output ends inside a tag (truncated?)");
    char quote = p->s[p->pos];
    if (quote != '"' && quote != '\'')
        return fail(p, p->pos, "expected a quoted attribute value");
    p->pos++;
    const char *end = memchr(p->s + p->pos, quote, p->len - p->pos);
    if (!end)
        return fail(p, p->pos - 1, "an attribute value is not closed (truncated?)");
    struct span val = { p->s + p->pos, (size_t)(end - (p->s + p->pos)) };
    if (memchr(val.p, '<', val.n))
        return fail(p, p->pos, "'<' inside an attribute value");
    p->pos += val.n + 1;
    return keep_attr(p, t, name, val);
}

/* The tag from its '<' at p->pos to its '>'. */
static int scan_tag(struct parser *p, struct tag *t)
{
    memset(t, 0, sizeof *t);
    t->at = p->pos++;
    if (p->pos < p->len && p->s[p->pos] == '/') {
        t->closing = true;
        p->pos++;
    }
    if (scan_name(p, &t->name) < 0)
        return fail(p, t->at, "expected an element name after '<'");
    for (;;) {
        bool spaced = skip_space(p);
        if (p->pos >= p->len)
            return fail(p, t->at, "the output ends inside a tag (truncated?)");
        char c = p->s[p->pos];
        if (c == '>') {
            p->pos++;
            return 0;
        }
        if (c == '/' && !t->closing) {
            p->pos++;
            t->empty = true;
            return expect(p, '>', "'>' after '/'");
        }
        if (t->closing || !spaced)
            return fail(p, p->pos, "unexpected character in a tag");
        if (scan_attr(p, t) < 0)
            return -1;
    }
}

/* The next tag: 1, 0 at the end of the input, or -1. */
static int next_tag(struct parser *p, struct tag *t)
{
    skip_space(p);
    if (p->pos >= p->len)
        return 0;
    if (p->s[p->pos] != '<')
        return fail(p, p->pos, "text outside a tag (not malloc_info output?)");
    return scan_tag(p, t) < 0 ? -1 : 1;
}

/* ---- the elements memprof reads ---- */

static int parse_u64(struct span s, uint64_t *out)
{
    uint64_t v = 0;
    if (s.n == 0)
        return -1;
    for (size_t i = 0; i < s.n; i++) {
        unsigned d = (unsigned char)s.p[i] - '0';
        if (d > 9 || v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

static int number(struct parser *p, const struct tag *t, struct span val, const char *attr,
                  uint64_t *out)
{
    if (!val.p)
        return fail(p, t->at, "<%.*s> has no %s attribute", (int)t->name.n, t->name.p, attr);
    if (parse_u64(val, out) < 0)
        return fail(p, (size_t)(val.p - p->s), "%s is not a decimal number below 2^64", attr);
    return 0;
}

/* Which field the tag gives, or -1 for one memprof does not read. */
static int field_of(const struct tag *t)
{
    for (int f = 0; f < NFIELDS; f++)
        if (span_is(t->name, fields[f].elem) && span_is(t->type, fields[f].type))
            return f;
    return -1;
}

/* A <total>, <system> or <aspace> in a scope that reads the fields of
 * mask. */
static int value(struct parser *p, const struct tag *t, struct scope *sc, unsigned mask)
{
    int f = field_of(t);
    if (f < 0 || !(mask & (1u << f)))
        return 0;
    if (sc->seen & (1u << f))
        return fail(p, t->at, "<%s type=\"%s\"> given twice", fields[f].elem, fields[f].type);
    if (fields[f].counted && number(p, t, t->count, "count", &sc->v[f][0]) < 0)
        return -1;
    if (number(p, t, t->size, "size", &sc->v[f][1]) < 0)
        return -1;
    sc->seen |= 1u << f;
    return 0;
}

/* The first field of mask the scope lacks, or -1. */
static int missing(const struct scope *sc, unsigned mask)
{
    for (int f = 0; f < NFIELDS; f++)
        if ((mask & (1u << f)) && !(sc->seen & (1u << f)))
            return f;
    return -1;
}

static int begin_malloc(struct parser *p, const struct tag *t)
{
    if (!span_is(t->name, "malloc"))
        return fail(p, t->at, "expected <malloc>: not malloc_info output");
    if (!t->version.p)
        return fail(p, t->at, "<malloc> has no version attribute");
    if (!span_is(t->version, "1"))
        return fail(p, (size_t)(t->version.p - p->s),
                    "unknown malloc_info version (memprof reads version 1)");
    return 0;
}

static int begin_heap(struct parser *p, const struct tag *t)
{
    uint64_t nr;
    if (p->out->narenas >= GLIBC_INFO_MAX_ARENAS)
        return fail(p, t->at, "more than %u arenas", GLIBC_INFO_MAX_ARENAS);
    if (number(p, t, t->nr, "nr", &nr) < 0)
        return -1;
    if (nr > UINT_MAX)
        return fail(p, (size_t)(t->nr.p - p->s), "heap number %llu out of range",
                    (unsigned long long)nr);
    memset(&p->heap, 0, sizeof p->heap);
    p->heap_nr = (unsigned)nr;
    p->in_heap = true;
    return 0;
}

static int end_heap(struct parser *p, size_t at)
{
    int f = missing(&p->heap, HEAP_FIELDS);
    if (f >= 0)
        return fail(p, at, "heap %u ends without <%s type=\"%s\">", p->heap_nr,
                    fields[f].elem, fields[f].type);
    struct glibc_malloc_info *mi = p->out;
    if (array_reserve(&mi->arenas, &p->cap, mi->narenas + 1, sizeof *mi->arenas, 8) < 0)
        return mp_error_set(p->err, "out of memory reading malloc_info output");
    const uint64_t (*v)[2] = p->heap.v;
    mi->arenas[mi->narenas++] = (struct glibc_arena_info){
        .nr = p->heap_nr,
        .fast_count = v[F_FAST][0], .fast_bytes = v[F_FAST][1],
        .rest_count = v[F_REST][0], .rest_bytes = v[F_REST][1],
        .system_current = v[F_SYS_CUR][1], .system_max = v[F_SYS_MAX][1],
        .aspace_total = v[F_AS_TOTAL][1], .aspace_mprotect = v[F_AS_MPROTECT][1],
    };
    p->in_heap = false;
    return 0;
}

static int end_malloc(struct parser *p, size_t at)
{
    int f = missing(&p->total, TOTAL_FIELDS);
    if (f >= 0)
        return fail(p, at, "</malloc> without the totals' <%s type=\"%s\">",
                    fields[f].elem, fields[f].type);
    struct glibc_malloc_info *mi = p->out;
    const uint64_t (*v)[2] = p->total.v;
    mi->fast_count = v[F_FAST][0];
    mi->fast_bytes = v[F_FAST][1];
    mi->rest_count = v[F_REST][0];
    mi->rest_bytes = v[F_REST][1];
    mi->mmap_count = v[F_MMAP][0];
    mi->mmap_bytes = v[F_MMAP][1];
    mi->system_current = v[F_SYS_CUR][1];
    mi->system_max = v[F_SYS_MAX][1];
    mi->aspace_total = v[F_AS_TOTAL][1];
    mi->aspace_mprotect = v[F_AS_MPROTECT][1];
    p->done = true;
    return 0;
}

/* An element opens: read it if it is at a place memprof reads. */
static int begin(struct parser *p, const struct tag *t)
{
    switch (p->depth) {
    case 0:
        return begin_malloc(p, t);
    case 1:
        if (span_is(t->name, "heap"))
            return begin_heap(p, t);
        return value(p, t, &p->total, TOTAL_FIELDS);
    case 2:
        return p->in_heap ? value(p, t, &p->heap, HEAP_FIELDS) : 0;
    default:
        return 0;
    }
}

/* The top element closes (at byte at). */
static int pop(struct parser *p, size_t at)
{
    p->depth--;
    if (p->depth == 0)
        return end_malloc(p, at);
    if (p->depth == 1 && p->in_heap)
        return end_heap(p, at);
    return 0;
}

static int on_tag(struct parser *p, const struct tag *t)
{
    if (p->done)
        return fail(p, t->at, "an element after </malloc>");
    if (t->closing) {
        if (!p->depth || !span_eq(p->open[p->depth - 1], t->name))
            return fail(p, t->at, "a closing tag that matches no open element");
        return pop(p, t->at);
    }
    if (p->depth == GLIBC_INFO_MAX_DEPTH)
        return fail(p, t->at, "elements nested deeper than %d", GLIBC_INFO_MAX_DEPTH);
    if (begin(p, t) < 0)
        return -1;
    p->open[p->depth++] = t->name;
    return t->empty ? pop(p, t->at) : 0;
}

int glibc_malloc_info_parse(const char *text, size_t len, struct glibc_malloc_info *out,
                            struct mp_error *err)
{
    memset(out, 0, sizeof *out);
    struct parser p = { .s = text, .len = text ? len : 0, .out = out, .err = err };
    struct tag t;
    int r;
    while ((r = next_tag(&p, &t)) > 0)
        if (on_tag(&p, &t) < 0) {
            r = -1;
            break;
        }
    if (r == 0 && !p.done)
        r = fail(&p, p.pos, p.depth ? "the output ends before </malloc> (truncated?)"
                                    : "no <malloc> element: not malloc_info output");
    if (r < 0) {
        glibc_malloc_info_free(out);
        return -1;
    }
    return 0;
}

void glibc_malloc_info_free(struct glibc_malloc_info *mi)
{
    free(mi->arenas);
    memset(mi, 0, sizeof *mi);
}
