/* test_analysis.c - the analysis engine on hand-made profiles with a
 * made-up symbol table: flat/cum arithmetic, allocator stripping, filters,
 * threads, granularity, diff, sorting, formatting, JSON shapes, errors. */
#include "tests/unit/unit.h"

#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "lib/analysis/analysis.h"

enum fake_fn {
    F_MALLOC_DEFAULT, F_PROF_BACKTRACE, F_OPERATOR_NEW, F_MAIN, F_LEAK_BIG,
    F_LEAK_SMALL, F_RECURSE, F_HELPER, F_INLINED, F_NFUNCS
};

static const char *const fake_names[F_NFUNCS + 2] = {
    "malloc_default", "prof_backtrace", "operator new", "main", "leak_big",
    "leak_small", "recurse", "helper", "inlined_into_outer", "outer", "WRONG",
};
static const char *const fake_files[2] = {"alloc.c", "other.c"};

#define RA(fn, line) ((uint64_t)(fn) * 0x1000 + (uint64_t)(line) * 0x10 + 1)

static int fake_calls;
static const char *fake_helper_file;   /* list tests point helper at a real file */

static int fake_resolve(void *cookie, const struct profile *p, uint64_t addr,
                        enum symbolize_detail detail, struct symbol_frame *frames, int max)
{
    (void)cookie;
    (void)p;
    (void)detail;
    fake_calls++;
    unsigned fn = (unsigned)(addr / 0x1000);
    int line = (int)((addr & 0xfff) / 0x10);
    struct symbol_frame f = {
        .function = fake_names[fn < F_NFUNCS ? fn : F_NFUNCS + 1],
        .file = fn == F_HELPER && fake_helper_file ? fake_helper_file : fake_files[fn == F_LEAK_SMALL],
        .line = line,
        .object = "/bin/fake",
        .object_offset = addr,
        .is_allocator = fn <= F_OPERATOR_NEW,
    };
    if ((addr & 0xf) != 0)
        f.function = fake_names[F_NFUNCS + 1];
    frames[0] = f;
    if (fn != F_INLINED || max < 2)
        return 1;
    /* An inlined call: the outer function is the second frame. */
    frames[1] = f;
    frames[1].function = fake_names[F_NFUNCS];
    frames[1].line = line + 100;
    return 2;
}

struct fake_stack {
    uint64_t frames[8];
    double bytes, objects;
    int thread;          /* index into the profile's threads; -1 = none */
};

#define FAKE_MAX_STACKS 16

/* addr's index in p->addrs, added when new (distinct, as the parser makes them). */
static uint32_t fake_addr_index(struct profile *p, uint64_t addr)
{
    size_t i = 0;
    while (i < p->naddrs && p->addrs[i] != addr)
        i++;
    if (i == p->naddrs)
        p->addrs[p->naddrs++] = addr;
    return (uint32_t)i;
}

/* A profile holding the stacks; every value is in use (and allocated ever
 * twice as much when alloc is set). */
static struct profile *fake_profile(const struct fake_stack *s, size_t n, bool alloc)
{
    struct profile *p = calloc(1, sizeof *p);
    p->name = "fake.heap";
    p->has_alloc = alloc;
    p->stacks = calloc(n + 1, sizeof *p->stacks);
    p->frames = calloc(n * 8 + 1, sizeof *p->frames);
    p->addrs = calloc(n * 8 + 1, sizeof *p->addrs);
    p->samples = calloc(n + 1, sizeof *p->samples);
    p->threads = calloc(2, sizeof *p->threads);
    p->threads[0].id = 7;
    p->threads[1].id = 9;
    p->nthreads = 2;
    for (size_t i = 0; i < n; i++) {
        struct profile_stack *st = &p->stacks[i];
        st->frame0 = (uint32_t)p->nframes;
        for (int k = 0; k < 8 && s[i].frames[k]; k++)
            p->frames[p->nframes++] = fake_addr_index(p, s[i].frames[k]);
        st->nframes = (uint32_t)(p->nframes - st->frame0);
        st->v.inuse_bytes = s[i].bytes;
        st->v.inuse_objects = s[i].objects;
        if (alloc) {
            st->v.alloc_bytes = 2 * s[i].bytes;
            st->v.alloc_objects = 2 * s[i].objects;
        }
        st->sample0 = (uint32_t)p->nsamples;
        if (s[i].thread >= 0) {
            p->samples[p->nsamples].thread = (uint32_t)s[i].thread;
            p->samples[p->nsamples].v = st->v;
            p->nsamples++;
        }
        st->nsamples = (uint32_t)(p->nsamples - st->sample0);
        p->total.inuse_bytes += s[i].bytes;
        p->total.inuse_objects += s[i].objects;
    }
    p->nstacks = n;
    return p;
}

static void fake_profile_free(struct profile *p)
{
    free(p->stacks);
    free(p->frames);
    free(p->addrs);
    free(p->samples);
    free(p->threads);
    free(p);
}


/* ---- running a report into a string ---- */

static struct analysis *ctx;
static char *outbuf;
static size_t outlen;
static struct mp_error err;

typedef int report_fn(struct analysis *, const struct analysis_view *,
                      const struct analysis_options *, const struct analysis_source *,
                      bool, FILE *, struct mp_error *);

static int run_report(report_fn *fn, struct profile *p, const struct analysis_options *o, bool json)
{
    const struct analysis_view *v = analysis_view(ctx, p, &err);
    ck_assert_ptr_nonnull(v);
    free(outbuf);
    FILE *f = open_memstream(&outbuf, &outlen);
    struct analysis_source src = {"d1", NULL};
    int rc = fn(ctx, v, o, &src, json, f, &err);
    fclose(f);
    return rc;
}

static int top_fn(struct analysis *a, const struct analysis_view *v,
                  const struct analysis_options *o, const struct analysis_source *s,
                  bool json, FILE *f, struct mp_error *e)
{
    return analysis_top(a, v, NULL, o, s, json, f, e);
}

static int run_diff(struct profile *base, struct profile *p,
                    const struct analysis_options *o, bool json)
{
    const struct analysis_view *vb = analysis_view(ctx, base, &err);
    const struct analysis_view *v = analysis_view(ctx, p, &err);
    ck_assert_ptr_nonnull(vb);
    ck_assert_ptr_nonnull(v);
    free(outbuf);
    FILE *f = open_memstream(&outbuf, &outlen);
    struct analysis_source src = {"new", "old"};
    int rc = analysis_top(ctx, v, vb, o, &src, json, f, &err);
    fclose(f);
    return rc;
}

static json_object *parsed;

/* Run top --json and return its rows array. */
static json_object *top_rows(struct profile *p, const struct analysis_options *o)
{
    ck_assert_int_eq(run_report(top_fn, p, o, true), 0);
    json_object_put(parsed);
    parsed = json_tokener_parse(outbuf);
    ck_assert_msg(parsed != NULL, "not JSON: %s", outbuf);
    json_object *rows;
    ck_assert(json_object_object_get_ex(parsed, "rows", &rows));
    return rows;
}

static double field(json_object *o, const char *key)
{
    json_object *v;
    ck_assert_msg(json_object_object_get_ex(o, key, &v), "no %s", key);
    return json_object_get_double(v);
}

static const char *str_field(json_object *o, const char *key)
{
    json_object *v;
    ck_assert_msg(json_object_object_get_ex(o, key, &v), "no %s", key);
    return json_object_get_string(v);
}

/* The row for a function, or NULL. */
static json_object *row_of(json_object *rows, const char *function)
{
    for (size_t i = 0; i < json_object_array_length(rows); i++) {
        json_object *r = json_object_array_get_idx(rows, i);
        if (strcmp(str_field(r, "function"), function) == 0)
            return r;
    }
    return NULL;
}

static void setup(void)
{
    ctx = analysis_new(ANALYSIS_FUNCTIONS, fake_resolve, NULL);
    fake_calls = 0;
}

static void teardown(void)
{
    analysis_free(ctx);
    ctx = NULL;
    json_object_put(parsed);
    parsed = NULL;
    free(outbuf);
    outbuf = NULL;
}

/* allocator / leak_big <- main: 100 B; allocator / leak_small <- main: 30 B;
 * allocator / helper <- leak_big <- main: 20 B. */
static const struct fake_stack basic[] = {
    {{RA(F_PROF_BACKTRACE, 1), RA(F_MALLOC_DEFAULT, 1), RA(F_LEAK_BIG, 1), RA(F_MAIN, 1)}, 100, 1, 0},
    {{RA(F_PROF_BACKTRACE, 1), RA(F_MALLOC_DEFAULT, 1), RA(F_LEAK_SMALL, 2), RA(F_MAIN, 2)}, 30, 3, 1},
    {{RA(F_PROF_BACKTRACE, 1), RA(F_OPERATOR_NEW, 1), RA(F_HELPER, 1), RA(F_LEAK_BIG, 2), RA(F_MAIN, 1)}, 20, 2, 0},
};

START_TEST(flat_and_cum)
{
    struct profile *p = fake_profile(basic, 3, false);
    struct analysis_options o = {0};
    json_object *rows = top_rows(p, &o);
    ck_assert_double_eq(field(parsed, "total_bytes"), 150);
    ck_assert_double_eq(field(parsed, "total_objects"), 6);
    json_object *big = row_of(rows, "leak_big"), *m = row_of(rows, "main");
    ck_assert_ptr_nonnull(big);
    ck_assert_ptr_nonnull(m);
    ck_assert_double_eq(field(big, "flat_bytes"), 100);
    ck_assert_double_eq(field(big, "cum_bytes"), 120);
    ck_assert_double_eq(field(big, "flat_objects"), 1);
    ck_assert_double_eq(field(big, "cum_objects"), 3);
    ck_assert_double_eq(field(m, "flat_bytes"), 0);
    ck_assert_double_eq(field(m, "cum_bytes"), 150);
    ck_assert_double_eq(field(row_of(rows, "helper"), "flat_bytes"), 20);
    ck_assert_double_eq(field(row_of(rows, "leak_small"), "cum_objects"), 3);
    /* Sorted by flat: leak_big, leak_small, helper, then main (flat 0). */
    ck_assert_str_eq(str_field(json_object_array_get_idx(rows, 0), "function"), "leak_big");
    ck_assert_str_eq(str_field(json_object_array_get_idx(rows, 1), "function"), "leak_small");
    ck_assert_str_eq(str_field(json_object_array_get_idx(rows, 2), "function"), "helper");
    ck_assert_str_eq(str_field(json_object_array_get_idx(rows, 3), "function"), "main");
    ck_assert_int_eq(json_object_array_length(rows), 4);
    fake_profile_free(p);
}
END_TEST

START_TEST(allocator_frames_stripped)
{
    struct profile *p = fake_profile(basic, 3, false);
    struct analysis_options o = {0};
    json_object *rows = top_rows(p, &o);
    ck_assert_ptr_null(row_of(rows, "prof_backtrace"));
    ck_assert_ptr_null(row_of(rows, "malloc_default"));
    ck_assert_ptr_null(row_of(rows, "operator new"));
    ck_assert_ptr_null(row_of(rows, "WRONG"));   /* looked up at addr - 1 */
    fake_profile_free(p);
}
END_TEST

START_TEST(all_allocator_stack_keeps_last)
{
    static const struct fake_stack s[] = {
        {{RA(F_PROF_BACKTRACE, 1), RA(F_MALLOC_DEFAULT, 1)}, 10, 1, -1},
    };
    struct profile *p = fake_profile(s, 1, false);
    struct analysis_options o = {0};
    json_object *rows = top_rows(p, &o);
    ck_assert_int_eq(json_object_array_length(rows), 1);
    ck_assert_str_eq(str_field(json_object_array_get_idx(rows, 0), "function"), "malloc_default");
    ck_assert_double_eq(field(json_object_array_get_idx(rows, 0), "flat_bytes"), 10);
    fake_profile_free(p);
}
END_TEST

START_TEST(recursion_counts_once_in_cum)
{
    static const struct fake_stack s[] = {
        {{RA(F_RECURSE, 1), RA(F_RECURSE, 2), RA(F_RECURSE, 2), RA(F_MAIN, 1)}, 50, 5, -1},
        {{RA(F_HELPER, 1), RA(F_RECURSE, 2), RA(F_MAIN, 1)}, 7, 1, -1},
    };
    struct profile *p = fake_profile(s, 2, false);
    struct analysis_options o = {0};
    json_object *rows = top_rows(p, &o);
    json_object *r = row_of(rows, "recurse");
    ck_assert_double_eq(field(r, "flat_bytes"), 50);
    ck_assert_double_eq(field(r, "cum_bytes"), 57);
    ck_assert_double_eq(field(row_of(rows, "main"), "cum_bytes"), 57);
    fake_profile_free(p);
}
END_TEST

START_TEST(symbolizes_each_address_once)
{
    struct profile *p = fake_profile(basic, 3, false);
    ck_assert_ptr_nonnull(analysis_view(ctx, p, &err));
    /* 9 distinct return addresses in 13 frames. */
    ck_assert_int_eq(fake_calls, 9);
    ck_assert_ptr_nonnull(analysis_view(ctx, p, &err));
    ck_assert_int_eq(fake_calls, 9);    /* the view is cached */
    fake_profile_free(p);
}
END_TEST

START_TEST(focus_keeps_matching_stacks)
{
    struct profile *p = fake_profile(basic, 3, false);
    struct analysis_options o = {.focus = "^helper$"};
    json_object *rows = top_rows(p, &o);
    ck_assert_double_eq(field(parsed, "total_bytes"), 150);   /* the whole profile */
    ck_assert_double_eq(field(row_of(rows, "leak_big"), "cum_bytes"), 20);
    ck_assert_double_eq(field(row_of(rows, "leak_big"), "flat_bytes"), 0);
    ck_assert_ptr_null(row_of(rows, "leak_small"));
    fake_profile_free(p);
}
END_TEST

START_TEST(ignore_drops_matching_stacks)
{
    struct profile *p = fake_profile(basic, 3, false);
    struct analysis_options o = {.ignore = "small|helper"};
    json_object *rows = top_rows(p, &o);
    ck_assert_ptr_null(row_of(rows, "leak_small"));
    ck_assert_ptr_null(row_of(rows, "helper"));
    ck_assert_double_eq(field(row_of(rows, "main"), "cum_bytes"), 100);
    fake_profile_free(p);
}
END_TEST

START_TEST(hide_drops_frames)
{
    struct profile *p = fake_profile(basic, 3, false);
    struct analysis_options o = {.hide = "^helper$"};
    json_object *rows = top_rows(p, &o);
    ck_assert_ptr_null(row_of(rows, "helper"));
    /* helper's bytes now belong to its caller. */
    ck_assert_double_eq(field(row_of(rows, "leak_big"), "flat_bytes"), 120);
    ck_assert_double_eq(field(row_of(rows, "main"), "cum_bytes"), 150);
    fake_profile_free(p);
}
END_TEST

START_TEST(thread_filter)
{
    struct profile *p = fake_profile(basic, 3, false);
    struct analysis_options o = {.has_thread = true, .thread = 9};
    json_object *rows = top_rows(p, &o);
    ck_assert_double_eq(field(parsed, "total_bytes"), 30);
    ck_assert_ptr_null(row_of(rows, "leak_big"));
    ck_assert_double_eq(field(row_of(rows, "leak_small"), "flat_bytes"), 30);
    o.thread = 7;
    rows = top_rows(p, &o);
    ck_assert_double_eq(field(parsed, "total_bytes"), 120);
    ck_assert_ptr_null(row_of(rows, "leak_small"));
    fake_profile_free(p);
}
END_TEST

START_TEST(lines_granularity)
{
    analysis_free(ctx);
    ctx = analysis_new(ANALYSIS_LINES, fake_resolve, NULL);
    struct profile *p = fake_profile(basic, 3, false);
    struct analysis_options o = {.granularity = ANALYSIS_LINES};
    json_object *rows = top_rows(p, &o);
    json_object *l1 = row_of(rows, "leak_big alloc.c:1"), *l2 = row_of(rows, "leak_big alloc.c:2");
    ck_assert_ptr_nonnull(l1);
    ck_assert_ptr_nonnull(l2);
    ck_assert_double_eq(field(l1, "flat_bytes"), 100);
    ck_assert_double_eq(field(l2, "cum_bytes"), 20);
    ck_assert_int_eq((int)field(l2, "line"), 2);
    ck_assert_str_eq(str_field(l2, "file"), "alloc.c");
    fake_profile_free(p);
}
END_TEST

START_TEST(files_granularity)
{
    analysis_free(ctx);
    ctx = analysis_new(ANALYSIS_FILES, fake_resolve, NULL);
    struct profile *p = fake_profile(basic, 3, false);
    struct analysis_options o = {.granularity = ANALYSIS_FILES};
    json_object *rows = top_rows(p, &o);
    ck_assert_int_eq(json_object_array_length(rows), 2);
    ck_assert_double_eq(field(row_of(rows, "alloc.c"), "flat_bytes"), 120);
    ck_assert_double_eq(field(row_of(rows, "alloc.c"), "cum_bytes"), 150);
    ck_assert_double_eq(field(row_of(rows, "other.c"), "flat_bytes"), 30);
    fake_profile_free(p);
}
END_TEST

START_TEST(addresses_granularity)
{
    analysis_free(ctx);
    ctx = analysis_new(ANALYSIS_ADDRESSES, fake_resolve, NULL);
    struct profile *p = fake_profile(basic, 3, false);
    struct analysis_options o = {.granularity = ANALYSIS_ADDRESSES};
    json_object *rows = top_rows(p, &o);
    char name[64];
    snprintf(name, sizeof name, "0x%x leak_big", (unsigned)RA(F_LEAK_BIG, 1));
    ck_assert_ptr_nonnull(row_of(rows, name));
    ck_assert_double_eq(field(row_of(rows, name), "flat_bytes"), 100);
    snprintf(name, sizeof name, "0x%x leak_big", (unsigned)RA(F_LEAK_BIG, 2));
    ck_assert_double_eq(field(row_of(rows, name), "cum_bytes"), 20);
    fake_profile_free(p);
}
END_TEST

START_TEST(inlined_frames_expand)
{
    analysis_free(ctx);
    ctx = analysis_new(ANALYSIS_LINES, fake_resolve, NULL);
    static const struct fake_stack s[] = {
        {{RA(F_MALLOC_DEFAULT, 1), RA(F_INLINED, 3), RA(F_MAIN, 1)}, 64, 1, -1},
    };
    struct profile *p = fake_profile(s, 1, false);
    struct analysis_options o = {.granularity = ANALYSIS_LINES};
    json_object *rows = top_rows(p, &o);
    ck_assert_double_eq(field(row_of(rows, "inlined_into_outer alloc.c:3"), "flat_bytes"), 64);
    ck_assert_double_eq(field(row_of(rows, "outer alloc.c:103"), "cum_bytes"), 64);
    ck_assert_double_eq(field(row_of(rows, "outer alloc.c:103"), "flat_bytes"), 0);
    fake_profile_free(p);
}
END_TEST

START_TEST(sort_by_cum_and_objects)
{
    struct profile *p = fake_profile(basic, 3, false);
    struct analysis_options o = {.cum = true};
    json_object *rows = top_rows(p, &o);
    ck_assert_str_eq(str_field(json_object_array_get_idx(rows, 0), "function"), "main");
    ck_assert_str_eq(str_field(json_object_array_get_idx(rows, 1), "function"), "leak_big");
    o = (struct analysis_options){.objects = true};
    rows = top_rows(p, &o);
    /* leak_small has the most objects (3) though the fewest bytes. */
    ck_assert_str_eq(str_field(json_object_array_get_idx(rows, 0), "function"), "leak_small");
    o.limit = 2;
    rows = top_rows(p, &o);
    ck_assert_int_eq(json_object_array_length(rows), 2);
    fake_profile_free(p);
}
END_TEST

START_TEST(alloc_values)
{
    struct profile *p = fake_profile(basic, 3, true);
    struct analysis_options o = {.alloc = true};
    json_object *rows = top_rows(p, &o);
    ck_assert_double_eq(field(parsed, "total_bytes"), 300);
    ck_assert_double_eq(field(row_of(rows, "leak_big"), "flat_bytes"), 200);
    ck_assert_str_eq(str_field(parsed, "sample"), "alloc");
    fake_profile_free(p);
}
END_TEST

START_TEST(diff_growth_and_shrink)
{
    static const struct fake_stack old[] = {
        {{RA(F_MALLOC_DEFAULT, 1), RA(F_LEAK_BIG, 1), RA(F_MAIN, 1)}, 100, 1, -1},
        {{RA(F_MALLOC_DEFAULT, 1), RA(F_LEAK_SMALL, 2), RA(F_MAIN, 2)}, 30, 3, -1},
    };
    /* The same code at other addresses (another ASLR layout would give
     * other return addresses in the same functions). */
    static const struct fake_stack now[] = {
        {{RA(F_MALLOC_DEFAULT, 2), RA(F_LEAK_BIG, 3), RA(F_MAIN, 3)}, 300, 3, -1},
        {{RA(F_MALLOC_DEFAULT, 2), RA(F_LEAK_SMALL, 4), RA(F_MAIN, 4)}, 10, 1, -1},
        {{RA(F_MALLOC_DEFAULT, 2), RA(F_HELPER, 4), RA(F_MAIN, 4)}, 5, 1, -1},
    };
    struct profile *a = fake_profile(old, 2, false), *b = fake_profile(now, 3, false);
    struct analysis_options o = {0};
    ck_assert_int_eq(run_diff(a, b, &o, true), 0);
    parsed = json_tokener_parse(outbuf);
    ck_assert_ptr_nonnull(parsed);
    json_object *rows;
    ck_assert(json_object_object_get_ex(parsed, "rows", &rows));
    ck_assert_double_eq(field(parsed, "total_bytes"), 315);      /* B's total */
    ck_assert_double_eq(field(parsed, "growth_bytes"), 185);
    ck_assert_int_eq(json_object_array_length(rows), 4);
    ck_assert_str_eq(str_field(json_object_array_get_idx(rows, 0), "function"), "leak_big");
    ck_assert_double_eq(field(json_object_array_get_idx(rows, 0), "flat_bytes"), 200);
    ck_assert_str_eq(str_field(json_object_array_get_idx(rows, 3), "function"), "leak_small");
    ck_assert_double_eq(field(json_object_array_get_idx(rows, 3), "flat_bytes"), -20);
    ck_assert_double_eq(field(row_of(rows, "main"), "cum_bytes"), 185);
    ck_assert_double_eq(field(row_of(rows, "helper"), "flat_objects"), 1);
    /* Text: growth signed, percentages of B's total (200 / 315). */
    ck_assert_int_eq(run_diff(a, b, &o, false), 0);
    ck_assert_msg(strstr(outbuf, "+200 B  63.5%"), "%s", outbuf);
    ck_assert_msg(strstr(outbuf, "-20 B"), "%s", outbuf);
    ck_assert_msg(strstr(outbuf, "Growth: +185 B"), "%s", outbuf);
    fake_profile_free(a);
    fake_profile_free(b);
}
END_TEST

START_TEST(text_columns)
{
    struct profile *p = fake_profile(basic, 3, false);
    struct analysis_options o = {0};
    ck_assert_int_eq(run_report(top_fn, p, &o, false), 0);
    ck_assert_msg(strstr(outbuf, "Total: 150 B in use, 6 objects (d1, 3 stacks)\n"), "%s", outbuf);
    ck_assert_msg(strstr(outbuf, "     100 B  66.7%  66.7%      120 B  80.0%  leak_big\n"), "%s", outbuf);
    ck_assert_msg(strstr(outbuf, "      30 B  20.0%  86.7%       30 B  20.0%  leak_small\n"), "%s", outbuf);
    ck_assert_msg(strstr(outbuf, "       0 B   0.0% 100.0%      150 B 100.0%  main\n"), "%s", outbuf);
    o.focus = "small";
    ck_assert_int_eq(run_report(top_fn, p, &o, false), 0);
    ck_assert_msg(strstr(outbuf, "Shown: 30 B, 3 objects (20.0% of the total)"), "%s", outbuf);
    fake_profile_free(p);
}
END_TEST

START_TEST(unit_formatting)
{
    char b[32];
    ck_assert_str_eq(analysis_format_bytes(0, false, false, b, sizeof b), "0 B");
    ck_assert_str_eq(analysis_format_bytes(1023, false, false, b, sizeof b), "1023 B");
    ck_assert_str_eq(analysis_format_bytes(1024, false, false, b, sizeof b), "1.0 KiB");
    ck_assert_str_eq(analysis_format_bytes(1536, false, false, b, sizeof b), "1.5 KiB");
    ck_assert_str_eq(analysis_format_bytes(64.0 * 1048576, false, false, b, sizeof b), "64.0 MiB");
    ck_assert_str_eq(analysis_format_bytes(3.25 * 1073741824.0, false, false, b, sizeof b), "3.2 GiB");
    ck_assert_str_eq(analysis_format_bytes(-2 * 1048576, false, true, b, sizeof b), "-2.0 MiB");
    ck_assert_str_eq(analysis_format_bytes(2 * 1048576, false, true, b, sizeof b), "+2.0 MiB");
    ck_assert_str_eq(analysis_format_bytes(67108864.4, true, false, b, sizeof b), "67108864");
    struct analysis_options o = {.objects = true};
    ck_assert_str_eq(analysis_format(&o, 28106.2, false, b, sizeof b), "28106");
    ck_assert_str_eq(analysis_percent(1, 3, b, sizeof b), "33.3%");
    ck_assert_str_eq(analysis_percent(1, 0, b, sizeof b), "-");
}
END_TEST

START_TEST(error_bad_regex)
{
    struct profile *p = fake_profile(basic, 3, false);
    struct analysis_options o = {.focus = "leak_(big"};
    ck_assert_int_eq(run_report(top_fn, p, &o, false), -1);
    ck_assert_msg(strstr(err.msg, "--focus 'leak_(big' is not a valid regular expression"), "%s", err.msg);
    o = (struct analysis_options){.hide = "*["};
    ck_assert_int_eq(run_report(top_fn, p, &o, false), -1);
    ck_assert_msg(strstr(err.msg, "--hide '*[' is not a valid"), "%s", err.msg);
    fake_profile_free(p);
}
END_TEST

START_TEST(error_alloc_without_cumulative)
{
    struct profile *p = fake_profile(basic, 3, false);
    struct analysis_options o = {.alloc = true};
    ck_assert_int_eq(run_report(top_fn, p, &o, false), -1);
    ck_assert_msg(strstr(err.msg, "fake.heap has no cumulative"), "%s", err.msg);
    ck_assert_msg(strstr(err.msg, "prof_accum:true"), "%s", err.msg);
    fake_profile_free(p);
}
END_TEST

START_TEST(error_unknown_thread)
{
    struct profile *p = fake_profile(basic, 3, false);
    struct analysis_options o = {.has_thread = true, .thread = 12};
    ck_assert_int_eq(run_report(top_fn, p, &o, false), -1);
    ck_assert_msg(strstr(err.msg, "no thread 12 in fake.heap; its threads are: 7, 9"), "%s", err.msg);
    p->nthreads = 0;
    ck_assert_int_eq(run_report(top_fn, p, &o, false), -1);
    ck_assert_msg(strstr(err.msg, "has no per-thread counts"), "%s", err.msg);
    p->nthreads = 2;
    fake_profile_free(p);
}
END_TEST

/* ---- traces, tree, peek, list ---- */

static json_object *report_json(report_fn *fn, struct profile *p,
                                const struct analysis_options *o, const char *key)
{
    ck_assert_int_eq(run_report(fn, p, o, true), 0);
    json_object_put(parsed);
    parsed = json_tokener_parse(outbuf);
    ck_assert_msg(parsed != NULL, "not JSON: %s", outbuf);
    json_object *arr;
    ck_assert_msg(json_object_object_get_ex(parsed, key, &arr), "no %s in %s", key, outbuf);
    return arr;
}

static const char *frame_at(json_object *trace, size_t k)
{
    json_object *frames;
    ck_assert(json_object_object_get_ex(trace, "frames", &frames));
    return json_object_get_string(json_object_array_get_idx(frames, k));
}

START_TEST(traces_merge_and_sort)
{
    /* Two stacks through different lines of the same functions merge. */
    static const struct fake_stack s[] = {
        {{RA(F_MALLOC_DEFAULT, 1), RA(F_LEAK_SMALL, 1), RA(F_MAIN, 1)}, 40, 4, -1},
        {{RA(F_MALLOC_DEFAULT, 1), RA(F_LEAK_BIG, 1), RA(F_MAIN, 1)}, 50, 1, -1},
        {{RA(F_MALLOC_DEFAULT, 1), RA(F_LEAK_SMALL, 2), RA(F_MAIN, 2)}, 30, 3, -1},
    };
    struct profile *p = fake_profile(s, 3, false);
    struct analysis_options o = {0};
    json_object *tr = report_json(analysis_traces, p, &o, "traces");
    ck_assert_int_eq(json_object_array_length(tr), 2);
    json_object *first = json_object_array_get_idx(tr, 0);
    ck_assert_double_eq(field(first, "bytes"), 70);
    ck_assert_double_eq(field(first, "objects"), 7);
    ck_assert_str_eq(frame_at(first, 0), "leak_small");
    ck_assert_str_eq(frame_at(first, 1), "main");
    ck_assert_double_eq(field(json_object_array_get_idx(tr, 1), "bytes"), 50);
    o.limit = 1;
    tr = report_json(analysis_traces, p, &o, "traces");
    ck_assert_int_eq(json_object_array_length(tr), 1);
    ck_assert_int_eq(run_report(analysis_traces, p, &o, false), 0);
    ck_assert_msg(strstr(outbuf, "      70 B | 7 objects, 58.3% of the total\n"
                                 "           | leak_small\n           | main\n"), "%s", outbuf);
    fake_profile_free(p);
}
END_TEST

static json_object *child_named(json_object *arr, const char *name)
{
    return row_of(arr, name);
}

static json_object *children(json_object *node)
{
    json_object *c;
    ck_assert(json_object_object_get_ex(node, "children", &c));
    return c;
}

START_TEST(tree_from_roots_and_pruning)
{
    struct profile *p = fake_profile(basic, 3, false);
    struct analysis_options o = {.nodefraction = 0};
    json_object *roots = report_json(analysis_tree, p, &o, "roots");
    ck_assert_int_eq(json_object_array_length(roots), 1);
    json_object *m = child_named(roots, "main");
    ck_assert_double_eq(field(m, "cum_bytes"), 150);
    json_object *big = child_named(children(m), "leak_big");
    ck_assert_double_eq(field(big, "cum_bytes"), 120);
    ck_assert_double_eq(field(big, "flat_bytes"), 100);
    ck_assert_double_eq(field(child_named(children(big), "helper"), "flat_bytes"), 20);
    /* Prune below 15%: helper (13.3%) goes, leak_small (20%) stays. */
    o.nodefraction = 0.15;
    roots = report_json(analysis_tree, p, &o, "roots");
    m = child_named(roots, "main");
    ck_assert_ptr_nonnull(child_named(children(m), "leak_small"));
    big = child_named(children(m), "leak_big");
    ck_assert_int_eq(json_object_array_length(children(big)), 0);
    ck_assert_int_eq(run_report(analysis_tree, p, &o, false), 0);
    ck_assert_msg(strstr(outbuf, "     150 B 100.0%        0 B  main\n"
                                 "     120 B  80.0%      100 B    leak_big\n"), "%s", outbuf);
    fake_profile_free(p);
}
END_TEST

START_TEST(tree_bad_nodefraction)
{
    struct profile *p = fake_profile(basic, 3, false);
    struct analysis_options o = {.nodefraction = 2};
    ck_assert_int_eq(run_report(analysis_tree, p, &o, false), -1);
    ck_assert_msg(strstr(err.msg, "--nodefraction 2 is not a fraction"), "%s", err.msg);
    fake_profile_free(p);
}
END_TEST

START_TEST(peek_callers_and_callees)
{
    struct profile *p = fake_profile(basic, 3, false);
    struct analysis_options o = {.match = "^leak_big$"};
    json_object *fns = report_json(analysis_peek, p, &o, "functions");
    ck_assert_int_eq(json_object_array_length(fns), 1);
    json_object *f = json_object_array_get_idx(fns, 0), *callers, *callees;
    ck_assert_double_eq(field(f, "cum_bytes"), 120);
    ck_assert(json_object_object_get_ex(f, "callers", &callers));
    ck_assert(json_object_object_get_ex(f, "callees", &callees));
    ck_assert_int_eq(json_object_array_length(callers), 1);
    ck_assert_double_eq(field(row_of(callers, "main"), "bytes"), 120);
    ck_assert_double_eq(field(row_of(callers, "main"), "share"), 1.0);
    ck_assert_int_eq(json_object_array_length(callees), 1);
    ck_assert_double_eq(field(row_of(callees, "helper"), "bytes"), 20);
    ck_assert_double_eq(field(row_of(callees, "helper"), "share"), 20.0 / 120);
    fake_profile_free(p);
}
END_TEST

START_TEST(peek_recursion_counts_edge_once)
{
    static const struct fake_stack s[] = {
        {{RA(F_RECURSE, 1), RA(F_RECURSE, 2), RA(F_RECURSE, 2), RA(F_MAIN, 1)}, 50, 5, -1},
    };
    struct profile *p = fake_profile(s, 1, false);
    struct analysis_options o = {.match = "recurse"};
    json_object *fns = report_json(analysis_peek, p, &o, "functions");
    json_object *f = json_object_array_get_idx(fns, 0), *callers;
    ck_assert(json_object_object_get_ex(f, "callers", &callers));
    ck_assert_double_eq(field(row_of(callers, "recurse"), "bytes"), 50);
    ck_assert_double_eq(field(row_of(callers, "main"), "bytes"), 50);
    ck_assert_double_eq(field(f, "cum_bytes"), 50);
    fake_profile_free(p);
}
END_TEST

START_TEST(peek_no_match_is_an_error)
{
    struct profile *p = fake_profile(basic, 3, false);
    struct analysis_options o = {.match = "nothing_like_this"};
    ck_assert_int_eq(run_report(analysis_peek, p, &o, false), -1);
    ck_assert_msg(strstr(err.msg, "no function matching 'nothing_like_this'"), "%s", err.msg);
    o.match = NULL;
    ck_assert_int_eq(run_report(analysis_peek, p, &o, false), -1);
    ck_assert_msg(strstr(err.msg, "peek needs a pattern"), "%s", err.msg);
    fake_profile_free(p);
}
END_TEST

START_TEST(list_lines_with_source)
{
    char path[] = "/tmp/test_analysis_srcXXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    for (int i = 1; i <= 9; i++)
        fprintf(f, "source line %d\n", i);
    fclose(f);
    fake_helper_file = path;
    analysis_free(ctx);
    ctx = analysis_new(ANALYSIS_LINES, fake_resolve, NULL);
    static const struct fake_stack s[] = {
        {{RA(F_MALLOC_DEFAULT, 1), RA(F_HELPER, 4), RA(F_MAIN, 1)}, 64, 1, -1},
        {{RA(F_MALLOC_DEFAULT, 1), RA(F_LEAK_BIG, 1), RA(F_HELPER, 6), RA(F_MAIN, 1)}, 8, 1, -1},
    };
    struct profile *p = fake_profile(s, 2, false);
    struct analysis_options o = {.granularity = ANALYSIS_LINES, .match = "^helper$"};
    ck_assert_int_eq(run_report(analysis_list, p, &o, false), 0);
    ck_assert_msg(strstr(outbuf, "      64 B       64 B      4: source line 4\n"), "%s", outbuf);
    ck_assert_msg(strstr(outbuf, "         .        8 B      6: source line 6\n"), "%s", outbuf);
    ck_assert_msg(strstr(outbuf, "         .          .      2: source line 2\n"), "%s", outbuf);
    ck_assert_msg(strstr(outbuf, "         .          .      8: source line 8\n"), "%s", outbuf);
    ck_assert_msg(!strstr(outbuf, "source line 1\n"), "%s", outbuf);
    ck_assert_msg(!strstr(outbuf, "leak_big"), "%s", outbuf);
    json_object *fns = report_json(analysis_list, p, &o, "functions");
    json_object *h = json_object_array_get_idx(fns, 0), *lines;
    ck_assert(json_object_object_get_ex(h, "lines", &lines));
    ck_assert_int_eq(json_object_array_length(lines), 2);
    ck_assert_str_eq(str_field(json_object_array_get_idx(lines, 0), "text"), "source line 4");
    ck_assert_double_eq(field(h, "cum_bytes"), 72);
    ck_assert_double_eq(field(h, "flat_bytes"), 64);
    unlink(path);
    fake_helper_file = NULL;
    fake_profile_free(p);
}
END_TEST

START_TEST(list_unreadable_source)
{
    analysis_free(ctx);
    ctx = analysis_new(ANALYSIS_LINES, fake_resolve, NULL);
    struct profile *p = fake_profile(basic, 3, false);
    struct analysis_options o = {.granularity = ANALYSIS_LINES, .match = "leak_small"};
    ck_assert_int_eq(run_report(analysis_list, p, &o, false), 0);
    ck_assert_msg(strstr(outbuf, "(source other.c is not readable: No such file or directory; "
                                 "showing line numbers only)\n"
                                 "      30 B       30 B      2: \n"), "%s", outbuf);
    fake_profile_free(p);
}
END_TEST

START_TEST(list_needs_lines_context)
{
    struct profile *p = fake_profile(basic, 3, false);
    struct analysis_options o = {.match = "leak"};
    ck_assert_int_eq(run_report(analysis_list, p, &o, false), -1);
    ck_assert_msg(strstr(err.msg, "list needs line information"), "%s", err.msg);
    fake_profile_free(p);
}
END_TEST

START_TEST(json_shapes)
{
    struct profile *p = fake_profile(basic, 3, false);
    struct analysis_options o = {0};
    json_object *rows = top_rows(p, &o);
    ck_assert_str_eq(str_field(parsed, "dump"), "d1");
    ck_assert_str_eq(str_field(parsed, "index"), "space");
    ck_assert_str_eq(str_field(parsed, "granularity"), "functions");
    json_object *r = json_object_array_get_idx(rows, 0);
    static const char *const keys[] = {"function", "flat_bytes", "flat_objects",
                                       "cum_bytes", "cum_objects"};
    for (size_t i = 0; i < 5; i++) {
        json_object *v;
        ck_assert_msg(json_object_object_get_ex(r, keys[i], &v), "row lacks %s", keys[i]);
    }
    ck_assert(json_object_is_type(json_object_object_get(r, "function"), json_type_string));
    /* unsampled amounts are estimates, given as whole numbers (as pprof rounds them) */
    ck_assert(json_object_is_type(json_object_object_get(parsed, "total_bytes"), json_type_int));
    ck_assert(json_object_is_type(json_object_object_get(parsed, "total_objects"), json_type_int));
    ck_assert(json_object_is_type(json_object_object_get(r, "flat_objects"), json_type_int));
    ck_assert_int_eq(json_object_get_int(json_object_object_get(parsed, "schema")), MEMPROF_JSON_SCHEMA);
    fake_profile_free(p);
}
END_TEST

/* ---- the real parser and symbolizer on this program's own code ---- */

__attribute__((noinline)) void *unit_leaker(size_t n)
{
    void *p = malloc(n);
    __asm__ volatile("" ::: "memory");
    return p;
}

__attribute__((noinline)) void *unit_caller(size_t n)
{
    void *p = unit_leaker(n);
    __asm__ volatile("" ::: "memory");
    return p;
}

static char *read_self_maps(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    ck_assert_ptr_nonnull(f);
    char *text = NULL;
    size_t cap = 0;
    ck_assert_int_gt(getdelim(&text, &cap, '\0', f), 0);
    fclose(f);
    return text;
}

START_TEST(real_symbols_and_allocator_stripping)
{
    /* A gperftools-style (unsampled) profile whose one stack is
     * malloc <- unit_leaker <- unit_caller in this very process. */
    char *maps = read_self_maps(), *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    fprintf(f, "heap profile: 3: 3072 [0: 0] @ heapprofile\n"
               "3: 3072 [0: 0] @ 0x%lx 0x%lx 0x%lx\n\nMAPPED_LIBRARIES:\n%s",
            (unsigned long)(uintptr_t)&malloc + 5, (unsigned long)(uintptr_t)&unit_leaker + 9,
            (unsigned long)(uintptr_t)&unit_caller + 9, maps);
    fclose(f);
    struct profile *p = profile_parse(text, len, "self.heap", &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    struct symbolizer_options so = {0};
    struct symbolizer *sym = symbolizer_new(&so);
    analysis_free(ctx);
    ctx = analysis_new(ANALYSIS_FUNCTIONS, analysis_symbolizer_resolve, sym);
    struct analysis_options o = {0};
    json_object *rows = top_rows(p, &o);
    ck_assert_msg(json_object_array_length(rows) == 2, "%s", outbuf);
    json_object *leaker = json_object_array_get_idx(rows, 0);
    ck_assert_str_eq(str_field(leaker, "function"), "unit_leaker");
    ck_assert_double_eq(field(leaker, "flat_bytes"), 3072);
    ck_assert_double_eq(field(row_of(rows, "unit_caller"), "cum_bytes"), 3072);
    ck_assert_ptr_null(row_of(rows, "malloc"));
    analysis_free(ctx);
    ctx = NULL;
    symbolizer_free(sym);
    profile_free(p);
    free(text);
    free(maps);
}
END_TEST

static Suite *analysis_suite(void)
{
    Suite *s = suite_create("analysis");
    TCase *tc = tcase_create("top");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, flat_and_cum);
    tcase_add_test(tc, allocator_frames_stripped);
    tcase_add_test(tc, all_allocator_stack_keeps_last);
    tcase_add_test(tc, recursion_counts_once_in_cum);
    tcase_add_test(tc, symbolizes_each_address_once);
    tcase_add_test(tc, focus_keeps_matching_stacks);
    tcase_add_test(tc, ignore_drops_matching_stacks);
    tcase_add_test(tc, hide_drops_frames);
    tcase_add_test(tc, thread_filter);
    tcase_add_test(tc, lines_granularity);
    tcase_add_test(tc, files_granularity);
    tcase_add_test(tc, addresses_granularity);
    tcase_add_test(tc, inlined_frames_expand);
    tcase_add_test(tc, sort_by_cum_and_objects);
    tcase_add_test(tc, alloc_values);
    tcase_add_test(tc, diff_growth_and_shrink);
    tcase_add_test(tc, text_columns);
    tcase_add_test(tc, unit_formatting);
    tcase_add_test(tc, error_bad_regex);
    tcase_add_test(tc, error_alloc_without_cumulative);
    tcase_add_test(tc, error_unknown_thread);
    tcase_add_test(tc, traces_merge_and_sort);
    tcase_add_test(tc, tree_from_roots_and_pruning);
    tcase_add_test(tc, tree_bad_nodefraction);
    tcase_add_test(tc, peek_callers_and_callees);
    tcase_add_test(tc, peek_recursion_counts_edge_once);
    tcase_add_test(tc, peek_no_match_is_an_error);
    tcase_add_test(tc, list_lines_with_source);
    tcase_add_test(tc, list_unreadable_source);
    tcase_add_test(tc, list_needs_lines_context);
    tcase_add_test(tc, json_shapes);
    tcase_add_test(tc, real_symbols_and_allocator_stripping);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(analysis_suite)
