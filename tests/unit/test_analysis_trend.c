/* test_analysis_trend.c - the trend engine on made-up series of profiles
 * (a fake symbol table, one stack per function under main): a steady
 * small leak among large random walks ranks first, a flat series has no
 * rate, shares of the growth, call sites, filters, errors, the same
 * answer one point at a time (analysis_trend_begin/add/end), and the
 * parsing of rates like "10MiB/h". */
#include "tests/unit/unit.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/analysis/trend.h"

enum { FN_MAIN = 1, FN_LEAK, FN_CHURN_A, FN_CHURN_B, FN_OTHER, FN_N };
static const char *const names[FN_N] = {
    "?", "main", "leak_slowly", "churn_a", "churn_b", "other",
};

static int fake_resolve(void *cookie, const struct profile *p, uint64_t addr,
                        enum symbolize_detail detail, struct symbol_frame *frames, int max)
{
    (void)cookie;
    (void)p;
    (void)detail;
    (void)max;
    unsigned fn = (unsigned)(addr / 0x1000);
    frames[0] = (struct symbol_frame){
        .function = names[fn < FN_N ? fn : 0],
        .file = "fake.c",
        .line = (int)(addr & 0xfff),
        .object = "/bin/fake",
        .object_offset = addr,
    };
    return 1;
}

#define MAXPOINTS 32
#define NFN 4          /* leak, churn_a, churn_b, other: each "fn < main" */

static struct analysis *ctx;
static struct profile *profs[MAXPOINTS];
static double times[MAXPOINTS];
static size_t npoints;
static struct trend tr;
static struct mp_error err;

/* One profile whose stack k (fn k+FN_LEAK called from main) holds bytes[k]. */
static struct profile *make_profile(const double bytes[NFN])
{
    struct profile *p = calloc(1, sizeof *p);
    p->name = "fake.heap";
    p->stacks = calloc(NFN, sizeof *p->stacks);
    p->frames = calloc(NFN * 2, sizeof *p->frames);
    p->addrs = calloc(NFN + 1, sizeof *p->addrs);
    p->addrs[NFN] = (uint64_t)FN_MAIN * 0x1000 + 0x21;
    p->naddrs = NFN + 1;
    for (size_t k = 0; k < NFN; k++) {
        struct profile_stack *st = &p->stacks[k];
        st->frame0 = (uint32_t)p->nframes;
        p->addrs[k] = (uint64_t)(FN_LEAK + k) * 0x1000 + 0x11;
        p->frames[p->nframes++] = (uint32_t)k;
        p->frames[p->nframes++] = NFN;   /* main's call */
        st->nframes = 2;
        st->v.inuse_bytes = bytes[k];
        st->v.inuse_objects = bytes[k] / 64;
        p->total.inuse_bytes += bytes[k];
    }
    p->nstacks = NFN;
    return p;
}

static void add_point(double t, double leak, double a, double b, double other)
{
    double bytes[NFN] = {leak, a, b, other};
    times[npoints] = t;
    profs[npoints++] = make_profile(bytes);
}

static void setup(void)
{
    ctx = analysis_new(ANALYSIS_FUNCTIONS, fake_resolve, NULL);
    npoints = 0;
    memset(&tr, 0, sizeof tr);
}

static void teardown(void)
{
    analysis_trend_free(&tr);
    analysis_free(ctx);
    for (size_t i = 0; i < npoints; i++) {
        free(profs[i]->stacks);
        free(profs[i]->frames);
        free(profs[i]->addrs);
        free(profs[i]);
    }
}

static int run(const struct analysis_options *o)
{
    const struct analysis_view *views[MAXPOINTS];
    for (size_t i = 0; i < npoints; i++) {
        views[i] = analysis_view(ctx, profs[i], &err);
        ck_assert_ptr_nonnull(views[i]);
    }
    return analysis_trend(ctx, views, times, npoints, o, &tr, &err);
}

static const char *row_name(const struct trend_row *r)
{
    return ctx->nodes[r->node].name;
}

/* The first row of a kind, and the row of a function of a kind. */
static const struct trend_row *first_of(enum trend_kind kind)
{
    for (size_t i = 0; i < tr.nrows; i++)
        if (tr.rows[i].kind == kind)
            return &tr.rows[i];
    return NULL;
}

static const struct trend_row *row_of(enum trend_kind kind, const char *fn)
{
    for (size_t i = 0; i < tr.nrows; i++)
        if (tr.rows[i].kind == kind && strcmp(row_name(&tr.rows[i]), fn) == 0)
            return &tr.rows[i];
    return NULL;
}

/* A deterministic generator (not rand(): the same walk on every libc). */
static uint64_t lcg = 12345;
static double uniform(void)
{
    lcg = lcg * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(lcg >> 11) / 9007199254740992.0;
}

START_TEST(steady_leak_ranks_first)
{
    /* leak_slowly: +4 KiB per 2 s; churn_a and churn_b: random walks with
     * steps of up to 2 MiB either way around 20 MiB; other: constant. */
    double a = 20 << 20, b = 20 << 20;
    lcg = 12345;
    for (int i = 0; i < 12; i++) {
        add_point(1000 + 2.0 * i, 4096.0 * (i + 1), a, b, 1 << 20);
        a += (uniform() - 0.5) * 4 * (1 << 20);
        b += (uniform() - 0.5) * 4 * (1 << 20);
    }
    struct analysis_options o = {0};
    ck_assert_int_eq(run(&o), 0);
    const struct trend_row *top = first_of(TREND_FUNCTION);
    ck_assert_ptr_nonnull(top);
    ck_assert_str_eq(row_name(top), "leak_slowly");
    ck_assert(top->steady);
    ck_assert_double_eq_tol(top->monotonic, 1.0, 1e-9);
    ck_assert_double_eq_tol(top->rate, 4096.0 / 2 * 3600, 1e-6);
    ck_assert_int_eq(top->nsite, 0);
    /* The walks move faster than the leak: it is steadiness that ranks. */
    const struct trend_row *ra = row_of(TREND_FUNCTION, "churn_a");
    const struct trend_row *rb = row_of(TREND_FUNCTION, "churn_b");
    ck_assert_ptr_nonnull(ra);
    ck_assert_ptr_nonnull(rb);
    ck_assert(!ra->steady && !rb->steady);
    ck_assert(fabs(ra->rate) > top->rate || fabs(rb->rate) > top->rate);
    /* main holds nothing itself (flat): no row. */
    ck_assert_ptr_null(row_of(TREND_FUNCTION, "main"));
    /* The call sites: leak_slowly < main first, the whole stack kept. */
    const struct trend_row *site = first_of(TREND_CALL_SITE);
    ck_assert_ptr_nonnull(site);
    ck_assert_str_eq(row_name(site), "leak_slowly");
    ck_assert_int_eq(site->nsite, 2);
    ck_assert_str_eq(ctx->nodes[site->site[1]].name, "main");
    ck_assert_double_eq_tol(site->rate, top->rate, 1e-6);
    ck_assert_int_eq(tr.npoints, 12);
    ck_assert_double_eq_tol(tr.seconds[11], 22.0, 1e-9);
}
END_TEST

START_TEST(flat_series_has_no_rate)
{
    for (int i = 0; i < 8; i++)
        add_point(60.0 * i, 5000, 0, 0, 7000);
    struct analysis_options o = {0};
    ck_assert_int_eq(run(&o), 0);
    const struct trend_row *r = row_of(TREND_FUNCTION, "leak_slowly");
    ck_assert_ptr_nonnull(r);
    ck_assert_double_eq(r->rate, 0);
    ck_assert_double_eq(r->monotonic, 0);
    ck_assert_double_eq(r->score, 0);
    ck_assert(!r->steady);
    ck_assert(isnan(r->share));           /* the total did not grow */
    ck_assert_double_eq(tr.total_rate, 0);
    /* churn_a and churn_b never held anything: no rows. */
    ck_assert_ptr_null(row_of(TREND_FUNCTION, "churn_a"));
    ck_assert_ptr_null(row_of(TREND_CALL_SITE, "churn_b"));
    ck_assert_uint_eq(tr.nrows, 4);       /* 2 functions, 2 call sites */
}
END_TEST

START_TEST(share_of_the_growth)
{
    /* leak grows 300, churn_a 100, other shrinks 100: the total grows 300. */
    for (int i = 0; i < 4; i++)
        add_point(3600.0 * i, 1000 + 100.0 * i, 500 + 100.0 / 3 * i, 0, 400 - 100.0 / 3 * i);
    struct analysis_options o = {0};
    ck_assert_int_eq(run(&o), 0);
    ck_assert_double_eq_tol(row_of(TREND_FUNCTION, "leak_slowly")->share, 1.0, 1e-9);
    ck_assert_double_eq_tol(row_of(TREND_FUNCTION, "churn_a")->share, 1.0 / 3, 1e-9);
    ck_assert_double_eq_tol(row_of(TREND_FUNCTION, "other")->share, -1.0 / 3, 1e-9);
    ck_assert_double_eq_tol(row_of(TREND_FUNCTION, "leak_slowly")->rate, 100, 1e-9);
    ck_assert_double_eq_tol(tr.total_rate, 100, 1e-9);
    /* Falling: monotonic clamps at 0, and it ranks last. */
    ck_assert_double_eq(row_of(TREND_FUNCTION, "other")->monotonic, 0);
    ck_assert_str_eq(row_name(&tr.rows[tr.nrows - 1]), "other");
    /* 4 points: nothing can be significant, ranked by score alone. */
    ck_assert(!row_of(TREND_FUNCTION, "leak_slowly")->steady);
    ck_assert_str_eq(row_name(first_of(TREND_FUNCTION)), "leak_slowly");
}
END_TEST

START_TEST(cum_objects_and_filters)
{
    for (int i = 0; i < 6; i++)
        add_point(10.0 * i, 6400 * (i + 1), 6400, 64000 - 6400.0 * i, 0);
    struct analysis_options o = {.cum = true, .objects = true};
    ck_assert_int_eq(run(&o), 0);
    /* main carries everything cumulatively: 100 + 100 + 1000 - 100i + ...
     * objects, falling by 0 net: leak +100/pt, churn_b -100/pt. */
    const struct trend_row *m = row_of(TREND_FUNCTION, "main");
    ck_assert_ptr_nonnull(m);
    ck_assert_double_eq_tol(m->values[0], 100 + 100 + 1000, 1e-9);
    ck_assert_double_eq_tol(m->rate, 0, 1e-9);
    ck_assert_double_eq_tol(row_of(TREND_FUNCTION, "leak_slowly")->rate, 100 * 360, 1e-6);
    analysis_trend_free(&tr);

    struct analysis_options f = {.focus = "leak_"};
    ck_assert_int_eq(run(&f), 0);
    ck_assert_ptr_null(row_of(TREND_FUNCTION, "churn_b"));
    ck_assert_str_eq(row_name(first_of(TREND_FUNCTION)), "leak_slowly");
    analysis_trend_free(&tr);

    struct analysis_options h = {.hide = "leak_"};
    ck_assert_int_eq(run(&h), 0);
    /* leak_slowly hidden: its bytes are main's own now. */
    ck_assert_ptr_null(row_of(TREND_FUNCTION, "leak_slowly"));
    ck_assert_ptr_nonnull(row_of(TREND_FUNCTION, "main"));
    ck_assert_int_eq(row_of(TREND_CALL_SITE, "main")->nsite, 1);
}
END_TEST

START_TEST(refusals)
{
    add_point(5, 1, 1, 1, 1);
    struct analysis_options o = {0};
    ck_assert_int_eq(run(&o), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "at least 2 dumps"));
    add_point(5, 2, 1, 1, 1);
    ck_assert_int_eq(run(&o), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "same time"));
    add_point(4, 2, 1, 1, 1);
    ck_assert_int_eq(run(&o), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "oldest first"));
    times[2] = 9;
    struct analysis_options al = {.alloc = true};
    ck_assert_int_eq(run(&al), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "--alloc"));
    struct analysis_options re = {.focus = "("};
    ck_assert_int_eq(run(&re), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "regular expression"));
    ck_assert_int_eq(run(&o), 0);
}
END_TEST

START_TEST(many_points_are_thinned)
{
    /* More points than TREND_MAX_PAIR_POINTS: the rate is still exact
     * on a straight line, and the leak is steady. */
    static struct profile *big[300];
    struct analysis *c = ctx;
    const struct analysis_view *views[300];
    double t[300];
    for (int i = 0; i < 300; i++) {
        double bytes[NFN] = {1000.0 * i, 50, 50, 50};
        big[i] = make_profile(bytes);
        t[i] = i;
        views[i] = analysis_view(c, big[i], &err);
        ck_assert_ptr_nonnull(views[i]);
    }
    struct analysis_options o = {0};
    ck_assert_int_eq(analysis_trend(c, views, t, 300, &o, &tr, &err), 0);
    ck_assert_str_eq(row_name(first_of(TREND_FUNCTION)), "leak_slowly");
    ck_assert_double_eq_tol(first_of(TREND_FUNCTION)->rate, 1000.0 * 3600, 1e-6);
    ck_assert(first_of(TREND_FUNCTION)->steady);
    ck_assert_double_eq_tol(first_of(TREND_FUNCTION)->values[299], 299000, 1e-9);
    analysis_trend_free(&tr);
    for (int i = 0; i < 300; i++) {
        analysis_forget(c, big[i]);
        free(big[i]->stacks);
        free(big[i]->frames);
        free(big[i]->addrs);
        free(big[i]);
    }
}
END_TEST

/* One point at a time, each view built just before its point and
 * forgotten after (functions first seen late: the context's nodes grow
 * between points), gives the rows analysis_trend gives over every view. */
START_TEST(one_point_at_a_time_is_the_same)
{
    for (size_t i = 0; i < 20; i++)
        add_point(60.0 * i, 1000 + 100.0 * i, 5000 * uniform(), 3000 * uniform(), 50);
    for (size_t i = 0; i < 6; i++)
        profs[i]->nstacks = 2;          /* churn_b and other appear later */
    struct analysis_options o = {.granularity = ANALYSIS_FUNCTIONS};
    ck_assert_int_eq(run(&o), 0);
    struct analysis *c2 = analysis_new(ANALYSIS_FUNCTIONS, fake_resolve, NULL);
    struct trend_builder *b;
    ck_assert_int_eq(analysis_trend_begin(c2, times, npoints, &o, &b, &err), 0);
    for (size_t i = 0; i < npoints; i++) {
        const struct analysis_view *v = analysis_view(c2, profs[i], &err);
        ck_assert_ptr_nonnull(v);
        ck_assert_int_eq(analysis_trend_add(b, v, &err), 0);
        analysis_forget(c2, profs[i]);
    }
    struct trend t2;
    ck_assert_int_eq(analysis_trend_end(b, &t2, &err), 0);
    ck_assert_uint_eq(t2.nrows, tr.nrows);
    ck_assert_double_eq(t2.total_rate, tr.total_rate);
    for (size_t r = 0; r < tr.nrows; r++) {
        ck_assert_int_eq(t2.rows[r].kind, tr.rows[r].kind);
        ck_assert_str_eq(c2->nodes[t2.rows[r].node].name, row_name(&tr.rows[r]));
        ck_assert_uint_eq(t2.rows[r].nsite, tr.rows[r].nsite);
        ck_assert_double_eq(t2.rows[r].rate, tr.rows[r].rate);
        ck_assert_double_eq(t2.rows[r].monotonic, tr.rows[r].monotonic);
        for (size_t i = 0; i < npoints; i++)
            ck_assert_double_eq(t2.rows[r].values[i], tr.rows[r].values[i]);
    }
    ck_assert_str_eq(c2->nodes[first_of(TREND_FUNCTION)->node].name, "leak_slowly");
    analysis_trend_free(&t2);

    /* Ended early: says so, and frees the builder. */
    ck_assert_int_eq(analysis_trend_begin(c2, times, npoints, &o, &b, &err), 0);
    ck_assert_int_eq(analysis_trend_add(b, analysis_view(c2, profs[0], &err), &err), 0);
    ck_assert_int_eq(analysis_trend_end(b, &t2, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "1 of the trend's 20 points"));
    analysis_free(c2);
}
END_TEST

START_TEST(parse_rates)
{
    double r;
    ck_assert_int_eq(analysis_parse_rate("10MiB/h", &r, &err), 0);
    ck_assert_double_eq(r, 10.0 * 1048576);
    ck_assert_int_eq(analysis_parse_rate("512KiB/min", &r, &err), 0);
    ck_assert_double_eq(r, 512.0 * 1024 * 60);
    ck_assert_int_eq(analysis_parse_rate("1GB/d", &r, &err), 0);
    ck_assert_double_eq_tol(r, 1e9 / 24, 1e-3);
    ck_assert_int_eq(analysis_parse_rate("300/s", &r, &err), 0);
    ck_assert_double_eq(r, 300.0 * 3600);
    ck_assert_int_eq(analysis_parse_rate("1.5kib/H", &r, &err), 0);
    ck_assert_double_eq(r, 1536);
    ck_assert_int_eq(analysis_parse_rate("0B/h", &r, &err), 0);
    ck_assert_double_eq(r, 0);
    static const char *const bad[] = {
        "10", "5x/h", "-1MiB/h", "", "MiB/h", "10MiB/", "10MiB/fortnight",
        "10MiB/h/h", "inf/h", "nan/h", "+1MiB/h", " 1MiB/h", "1e999MiB/h", "0x10MiB/h",
        "10 MiB/h",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        err.msg[0] = 0;
        ck_assert_msg(analysis_parse_rate(bad[i], &r, &err) == -1, "accepted '%s'", bad[i]);
        ck_assert_msg(strstr(err.msg, "e.g. 10MiB/h") != NULL, "'%s': %s", bad[i], err.msg);
    }
}
END_TEST

START_TEST(steady_from_eight_points)
{
    /* A perfect rise is significant at TREND_STEADY_P from 8 points on. */
    for (int i = 0; i < 7; i++)
        add_point(i, 100.0 * i, 0, 0, 0);
    struct analysis_options o = {0};
    ck_assert_int_eq(run(&o), 0);
    ck_assert(!first_of(TREND_FUNCTION)->steady);
    ck_assert_double_eq(first_of(TREND_FUNCTION)->monotonic, 1);
    analysis_trend_free(&tr);
    add_point(7, 700, 0, 0, 0);
    ck_assert_int_eq(run(&o), 0);
    ck_assert(first_of(TREND_FUNCTION)->steady);
    ck_assert(first_of(TREND_FUNCTION)->p_value < TREND_STEADY_P);
}
END_TEST

START_TEST(top_since_adds_a_growth_column)
{
    /* The live view's top: rows as top ranks them, plus each one's change. */
    add_point(0, 4096, 10240, 0, 0);
    add_point(1, 8192, 5120, 0, 0);
    const struct analysis_view *then = analysis_view(ctx, profs[0], &err);
    const struct analysis_view *now = analysis_view(ctx, profs[1], &err);
    ck_assert_ptr_nonnull(then);
    ck_assert_ptr_nonnull(now);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    struct analysis_options o = {0};
    struct analysis_source src = {"d2", "d1"};
    ck_assert_int_eq(analysis_top_since(ctx, now, then, &o, &src, f, &err), 0);
    fclose(f);
    ck_assert_ptr_nonnull(strstr(buf, "Growth: -1.0 KiB since d1\n"));
    ck_assert_ptr_nonnull(strstr(buf, " flat grew  function\n"));
    ck_assert_ptr_nonnull(strstr(buf, "8.0 KiB  61.5%  61.5%    8.0 KiB  61.5%    +4.0 KiB  leak_slowly\n"));
    ck_assert_ptr_nonnull(strstr(buf, "-5.0 KiB  churn_a\n"));
    free(buf);
}
END_TEST

static Suite *trend_suite(void)
{
    Suite *s = suite_create("analysis_trend");
    TCase *tc = tcase_create("trend");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, steady_leak_ranks_first);
    tcase_add_test(tc, flat_series_has_no_rate);
    tcase_add_test(tc, share_of_the_growth);
    tcase_add_test(tc, cum_objects_and_filters);
    tcase_add_test(tc, refusals);
    tcase_add_test(tc, many_points_are_thinned);
    tcase_add_test(tc, parse_rates);
    tcase_add_test(tc, one_point_at_a_time_is_the_same);
    tcase_add_test(tc, steady_from_eight_points);
    tcase_add_test(tc, top_since_adds_a_growth_column);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(trend_suite)
