/* trend.c - the trend engine: per function and per call site, the
 * in-use series across a series of views, its Theil-Sen rate, how
 * monotonic it is (Kendall's tau-b), whether the rise is significant
 * (Mann-Kendall) and its share of the total growth; and the rate parser
 * for thresholds like "10MiB/h".  The statistics are the robust ones
 * because a dump's sampled bytes jump: one sampled object of a churning
 * function moves its value by the whole sampling interval. */
#include "lib/analysis/trend.h"
#include "lib/analysis/internal.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- statistics over one series ---- */

static void swap_d(double *a, double *b)
{
    double t = *a;
    *a = *b;
    *b = t;
}

/* The k-th smallest of v[0..n) (reorders v so that v[0..k) hold the k
 * smallest): quickselect with a three-way partition, as many slopes tie. */
static double kth_smallest(double *v, size_t n, size_t k)
{
    size_t lo = 0, hi = n;
    while (hi - lo > 1) {
        double pivot = v[lo + (hi - lo) / 2];
        size_t lt = lo, i = lo, gt = hi;
        while (i < gt) {
            if (v[i] < pivot)
                swap_d(&v[lt++], &v[i++]);
            else if (v[i] > pivot)
                swap_d(&v[i], &v[--gt]);
            else
                i++;
        }
        if (k < lt)
            hi = lt;
        else if (k >= gt)
            lo = gt;
        else
            return pivot;
    }
    return v[k];
}

static double median_of(double *v, size_t n)
{
    if (n == 0)
        return 0;
    double hi = kth_smallest(v, n, n / 2);
    if (n % 2)
        return hi;
    double lo = v[0];
    for (size_t i = 1; i < n / 2; i++)
        if (v[i] > lo)
            lo = v[i];
    return (lo + hi) / 2;
}

static int cmp_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return a < b ? -1 : a > b;
}

/* Scratch shared by every row of one computation. */
struct trend_scratch {
    size_t *pick;          /* indices of the points used (<= TREND_MAX_PAIR_POINTS) */
    size_t npick;
    double *slopes;        /* npick * (npick - 1) / 2 */
    double *sorted;        /* npick */
};

struct series_stats {
    double rate_per_s, tau, p_value;
};

/* Mann-Kendall's variance of S with the tie correction for tied values
 * (times are assumed distinct enough not to need theirs). */
static double s_variance(const double *sorted, size_t n, double *value_tie_pairs)
{
    double var = (double)n * (n - 1) * (2.0 * n + 5);
    double ties = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && sorted[j] == sorted[i])
            j++;
        double t = (double)(j - i);
        if (t > 1) {
            var -= t * (t - 1) * (2 * t + 5);
            ties += t * (t - 1) / 2;
        }
        i = j;
    }
    *value_tie_pairs = ties;
    return var / 18;
}

static struct series_stats series_stats(const double *t, const double *v,
                                        struct trend_scratch *sc)
{
    struct series_stats st = {0, 0, 1};
    const size_t *pk = sc->pick;
    size_t n = sc->npick, nslopes = 0;
    double s = 0, time_ties = 0;
    for (size_t i = 0; i < n; i++) {
        for (size_t j = i + 1; j < n; j++) {
            double dt = t[pk[j]] - t[pk[i]], dv = v[pk[j]] - v[pk[i]];
            if (dt <= 0) {
                time_ties++;
                continue;
            }
            sc->slopes[nslopes++] = dv / dt;
            s += (dv > 0) - (dv < 0);
        }
    }
    st.rate_per_s = median_of(sc->slopes, nslopes);
    for (size_t i = 0; i < n; i++)
        sc->sorted[i] = v[pk[i]];
    qsort(sc->sorted, n, sizeof *sc->sorted, cmp_double);
    double value_ties, var = s_variance(sc->sorted, n, &value_ties);
    double pairs = (double)n * (n - 1) / 2;
    double denom = sqrt((pairs - time_ties) * (pairs - value_ties));
    st.tau = denom > 0 ? s / denom : 0;
    if (st.tau < 0)
        st.tau = 0;
    if (st.tau > 1)
        st.tau = 1;
    if (s > 0 && var > 0) {
        double z = (s - 1) / sqrt(var);     /* continuity-corrected */
        st.p_value = 0.5 * erfc(z / M_SQRT2);
    }
    return st;
}

/* ---- sums per point ---- */

/* The call sites: whole stacks (after --hide) matched across views by
 * their node ids through an open-addressing hash. */
struct site_table {
    uint32_t *ids;              /* every site's ids, back to back */
    size_t nids, ids_cap;
    size_t *start;              /* per site: offset into ids */
    uint32_t *len;
    size_t nsites, start_cap, len_cap;
    double *values;             /* nsites * npoints */
    size_t values_cap;
    uint32_t *slots;            /* site index + 1, 0 empty */
    size_t nslots;
};

static uint64_t hash_ids(const uint32_t *ids, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t k = 0; k < n; k++) {
        h ^= ids[k];
        h *= 1099511628211ULL;
    }
    return h ^ (h >> 29);
}

static int sites_rehash(struct site_table *st)
{
    size_t n = st->nslots ? st->nslots * 2 : 1024;
    uint32_t *slots = calloc(n, sizeof *slots);
    if (!slots)
        return -1;
    for (size_t s = 0; s < st->nsites; s++) {
        size_t h = hash_ids(st->ids + st->start[s], st->len[s]) & (n - 1);
        while (slots[h])
            h = (h + 1) & (n - 1);
        slots[h] = (uint32_t)s + 1;
    }
    free(st->slots);
    st->slots = slots;
    st->nslots = n;
    return 0;
}

/* The index of the site with these ids, added (values zero) if new;
 * -1 out of memory. */
static long site_index(struct site_table *st, const uint32_t *ids, size_t n,
                       size_t npoints)
{
    if ((st->nsites + 1) * 2 > st->nslots && sites_rehash(st) < 0)
        return -1;
    size_t mask = st->nslots - 1, h = hash_ids(ids, n) & mask;
    for (; st->slots[h]; h = (h + 1) & mask) {
        size_t s = st->slots[h] - 1;
        if (st->len[s] == n && memcmp(st->ids + st->start[s], ids, n * sizeof *ids) == 0)
            return (long)s;
    }
    size_t s = st->nsites;
    if (array_reserve(&st->ids, &st->ids_cap, st->nids + n, sizeof *st->ids, 4096) < 0 ||
        array_reserve(&st->start, &st->start_cap, s + 1, sizeof *st->start, 256) < 0 ||
        array_reserve(&st->len, &st->len_cap, s + 1, sizeof *st->len, 256) < 0 ||
        array_reserve(&st->values, &st->values_cap, (s + 1) * npoints,
                      sizeof *st->values, 256 * npoints) < 0)
        return -1;
    memcpy(st->ids + st->nids, ids, n * sizeof *ids);
    st->start[s] = st->nids;
    st->len[s] = (uint32_t)n;
    st->nids += n;
    memset(st->values + s * npoints, 0, npoints * sizeof *st->values);
    st->slots[h] = (uint32_t)s + 1;
    st->nsites++;
    return (long)s;
}

static void sites_free(struct site_table *st)
{
    free(st->ids);
    free(st->start);
    free(st->len);
    free(st->values);
    free(st->slots);
}

/* Add point `pt`'s amounts: per node (flat or cum) into node_values
 * (nnodes * npoints) and per call site into the site table. */
static int sum_point(struct analysis_query *q, const struct analysis_view *v, size_t pt,
                     size_t npoints, double *node_values, uint32_t *stamp,
                     uint32_t *stamp_now, struct site_table *sites, struct mp_error *err)
{
    const struct analysis_options *o = q->opt;
    const struct profile *p = v->profile;
    for (size_t i = 0; i < p->nstacks; i++) {
        if ((i & 1023) == 0 && analysis_cancelled())
            return mp_error_set(err, "interrupted");
        const uint32_t *ids;
        size_t n;
        if (!analysis_stack_nodes(q, v, i, &ids, &n) || n == 0)
            continue;
        double m = analysis_key(o, analysis_stack_amount(q, p, i));
        if (m == 0)
            continue;
        if (!o->cum) {
            node_values[(size_t)ids[0] * npoints + pt] += m;
        } else {
            ++*stamp_now;
            for (size_t k = 0; k < n; k++) {
                if (stamp[ids[k]] == *stamp_now)
                    continue;
                stamp[ids[k]] = *stamp_now;
                node_values[(size_t)ids[k] * npoints + pt] += m;
            }
        }
        long s = site_index(sites, ids, n, npoints);
        if (s < 0)
            return mp_error_set(err, "out of memory");
        sites->values[(size_t)s * npoints + pt] += m;
    }
    return 0;
}

/* ---- ranking ---- */

static const struct analysis_node *sort_nodes;

static int row_cmp(const void *pa, const void *pb)
{
    const struct trend_row *a = pa, *b = pb;
    if (a->steady != b->steady)
        return a->steady ? -1 : 1;
    if (a->score != b->score)
        return a->score > b->score ? -1 : 1;
    if (a->rate != b->rate)
        return a->rate > b->rate ? -1 : 1;
    if (a->kind != b->kind)
        return a->kind == TREND_FUNCTION ? -1 : 1;
    int c = strcmp(sort_nodes[a->node].name, sort_nodes[b->node].name);
    if (c || a->kind == TREND_FUNCTION)
        return c;
    if (a->nsite != b->nsite)
        return a->nsite < b->nsite ? -1 : 1;
    for (uint32_t k = 0; k < a->nsite; k++) {
        c = strcmp(sort_nodes[a->site[k]].name, sort_nodes[b->site[k]].name);
        if (c)
            return c;
    }
    return 0;
}

static bool held_something(const double *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (v[i] != 0)
            return true;
    return false;
}

static void fill_stats(struct trend *t, struct trend_row *r, struct trend_scratch *sc)
{
    size_t n = t->npoints;
    double first = r->values[0], last = r->values[n - 1];
    struct series_stats st = series_stats(t->seconds, r->values, sc);
    r->rate = st.rate_per_s * 3600 + 0.0;   /* no "-0 B/h" */
    r->monotonic = st.tau;
    r->p_value = st.p_value;
    r->steady = st.p_value < TREND_STEADY_P && st.tau > 0 && r->rate > 0;
    r->score = r->rate * r->monotonic;
    double grown = t->total[n - 1] - t->total[0];
    r->share = grown > 0 ? (last - first) / grown : NAN;
}

static int scratch_init(struct trend_scratch *sc, size_t npoints)
{
    size_t m = npoints < TREND_MAX_PAIR_POINTS ? npoints : TREND_MAX_PAIR_POINTS;
    sc->npick = m;
    sc->pick = malloc(m * sizeof *sc->pick);
    sc->slopes = malloc((m * (m - 1) / 2 + 1) * sizeof *sc->slopes);
    sc->sorted = malloc(m * sizeof *sc->sorted);
    if (!sc->pick || !sc->slopes || !sc->sorted)
        return -1;
    /* Evenly spaced, always keeping the first and the last point. */
    for (size_t i = 0; i < m; i++)
        sc->pick[i] = m == npoints ? i : (size_t)llround((double)i * (npoints - 1) / (m - 1));
    return 0;
}

static void scratch_fini(struct trend_scratch *sc)
{
    free(sc->pick);
    free(sc->slopes);
    free(sc->sorted);
}

static int check_inputs(const double *times, size_t n, const struct analysis_options *o,
                        struct mp_error *err)
{
    if (n < 2)
        return mp_error_set(err, "a trend needs at least 2 dumps of the process "
                            "(%zu given); take more with `dump`, some time apart", n);
    if (o->alloc)
        return mp_error_set(err, "--alloc does not apply to a trend: it follows what "
                            "is in use; leave --alloc out");
    for (size_t i = 1; i < n; i++)
        if (!(times[i] >= times[i - 1]))
            return mp_error_set(err, "the dumps are not in the order they were taken "
                                "(dump %zu is older than dump %zu); give them oldest first",
                                i + 1, i);
    if (!(times[n - 1] > times[0]))
        return mp_error_set(err, "the %zu dumps were all taken at the same time, so "
                            "there is no rate to compute; take dumps some seconds apart", n);
    return 0;
}

/* A trend being computed one point at a time (analysis_trend_begin):
 * only the sums per node and per call site are kept across points, so the
 * caller can build each view, add it and forget it. */
struct trend_builder {
    struct analysis_query q;
    struct analysis_options opt;
    struct trend out;
    size_t pt;                 /* points added so far */
    double *node_values;       /* nnodes * npoints */
    uint32_t *stamp;           /* per node */
    size_t nn;                 /* nodes node_values and stamp have room for */
    uint32_t stamp_now;
    struct site_table sites;
};

/* Room in node_values and stamp for every node the context has now (views
 * built since the last point add nodes). */
static int grow_nodes(struct trend_builder *b)
{
    size_t nn = b->q.a->nnodes ? b->q.a->nnodes : 1, n = b->out.npoints;
    if (nn <= b->nn)
        return 0;
    double *v = realloc(b->node_values, nn * n * sizeof *v);
    if (v)
        b->node_values = v;
    uint32_t *st = v ? realloc(b->stamp, nn * sizeof *st) : NULL;
    if (!st)
        return -1;
    b->stamp = st;
    memset(v + b->nn * n, 0, (nn - b->nn) * n * sizeof *v);
    memset(st + b->nn, 0, (nn - b->nn) * sizeof *st);
    b->nn = nn;
    return 0;
}

static void builder_free(struct trend_builder *b)
{
    if (!b)
        return;
    analysis_query_fini(&b->q);
    analysis_trend_free(&b->out);
    free(b->node_values);
    free(b->stamp);
    sites_free(&b->sites);
    free(b);
}

int analysis_trend_begin(struct analysis *a, const double *times, size_t n,
                         const struct analysis_options *o, struct trend_builder **bp,
                         struct mp_error *err)
{
    *bp = NULL;
    if (check_inputs(times, n, o, err) < 0)
        return -1;
    struct trend_builder *b = calloc(1, sizeof *b);
    if (!b)
        return mp_error_set(err, "out of memory");
    b->opt = *o;
    b->out.seconds = malloc(n * sizeof *b->out.seconds);
    b->out.total = calloc(n, sizeof *b->out.total);
    if (!b->out.seconds || !b->out.total) {
        builder_free(b);
        return mp_error_set(err, "out of memory");
    }
    b->out.npoints = n;
    for (size_t i = 0; i < n; i++)
        b->out.seconds[i] = times[i] - times[0];
    /* The profiles are checked one by one as they come (analysis_trend_add). */
    if (analysis_query_init(&b->q, a, &b->opt, NULL, 0, err) < 0) {
        free(b->out.seconds);
        free(b->out.total);
        free(b);
        return -1;
    }
    *bp = b;
    return 0;
}

int analysis_trend_add(struct trend_builder *b, const struct analysis_view *v,
                       struct mp_error *err)
{
    if (b->pt >= b->out.npoints)
        return mp_error_set(err, "more points than the trend was begun with");
    if (b->opt.has_thread) {       /* --thread must name a thread of each */
        struct analysis_query check;
        if (analysis_query_init(&check, b->q.a, &b->opt, &v->profile, 1, err) < 0)
            return -1;
        analysis_query_fini(&check);
    }
    if (grow_nodes(b) < 0)
        return mp_error_set(err, "out of memory");
    size_t pt = b->pt++, n = b->out.npoints;
    b->out.total[pt] = analysis_key(&b->opt, analysis_total(&b->q, v->profile));
    return sum_point(&b->q, v, pt, n, b->node_values, b->stamp, &b->stamp_now, &b->sites,
                     err);
}

void analysis_trend_abandon(struct trend_builder *b)
{
    builder_free(b);
}

/* The rows from the sums of every point, ranked. */
static int rank_rows(struct trend_builder *b, struct mp_error *err)
{
    struct analysis *a = b->q.a;
    struct trend *out = &b->out;
    size_t n = out->npoints;
    struct site_table *sites = &b->sites;
    struct trend_scratch sc = {0};
    int rc = -1;
    if (grow_nodes(b) < 0 || scratch_init(&sc, n) < 0) {
        mp_error_set(err, "out of memory");
        goto done;
    }
    double *node_values = b->node_values;
    size_t nrows = 0, nsite_ids = 0;
    for (size_t i = 0; i < a->nnodes; i++)
        nrows += held_something(node_values + i * n, n);
    for (size_t s = 0; s < sites->nsites; s++)
        if (held_something(sites->values + s * n, n)) {
            nrows++;
            nsite_ids += sites->len[s];
        }
    /* The rows' values are the sums themselves (no copy: a long series'
     * sums are most of the trend's memory), owned by out once it is made. */
    out->rows = calloc(nrows ? nrows : 1, sizeof *out->rows);
    out->site_store = malloc((nsite_ids ? nsite_ids : 1) * sizeof *out->site_store);
    if (!out->rows || !out->site_store) {
        mp_error_set(err, "out of memory");
        goto done;
    }
    size_t r = 0, used_ids = 0;
    for (size_t i = 0; i < a->nnodes; i++) {
        if (!held_something(node_values + i * n, n))
            continue;
        struct trend_row *row = &out->rows[r];
        row->kind = TREND_FUNCTION;
        row->node = (uint32_t)i;
        row->values = node_values + i * n;
        r++;
    }
    for (size_t s = 0; s < sites->nsites; s++) {
        if (!held_something(sites->values + s * n, n))
            continue;
        struct trend_row *row = &out->rows[r];
        row->kind = TREND_CALL_SITE;
        row->site = out->site_store + used_ids;
        row->nsite = sites->len[s];
        memcpy(out->site_store + used_ids, sites->ids + sites->start[s],
               sites->len[s] * sizeof *sites->ids);
        used_ids += sites->len[s];
        row->node = row->site[0];
        row->values = sites->values + s * n;
        r++;
    }
    out->nrows = nrows;
    for (size_t i = 0; i < nrows; i++) {
        if ((i & 255) == 0 && analysis_cancelled()) {
            mp_error_set(err, "interrupted");
            goto done;
        }
        fill_stats(out, &out->rows[i], &sc);
    }
    out->total_rate = series_stats(out->seconds, out->total, &sc).rate_per_s * 3600;
    sort_nodes = a->nodes;
    qsort(out->rows, nrows, sizeof *out->rows, row_cmp);
    out->value_store = b->node_values;
    out->site_value_store = sites->values;
    b->node_values = NULL;
    sites->values = NULL;
    rc = 0;
done:
    scratch_fini(&sc);
    return rc;
}

int analysis_trend_end(struct trend_builder *b, struct trend *out, struct mp_error *err)
{
    memset(out, 0, sizeof *out);
    int rc = b->pt == b->out.npoints ? 0
        : mp_error_set(err, "%zu of the trend's %zu points were given", b->pt,
                       b->out.npoints);
    if (rc == 0)
        rc = rank_rows(b, err);
    if (rc == 0) {
        *out = b->out;
        memset(&b->out, 0, sizeof b->out);
    }
    builder_free(b);
    return rc;
}

int analysis_trend(struct analysis *a, const struct analysis_view *const *views,
                   const double *times, size_t n, const struct analysis_options *o,
                   struct trend *out, struct mp_error *err)
{
    memset(out, 0, sizeof *out);
    if (check_inputs(times, n, o, err) < 0)
        return -1;
    /* Every profile is checked before any is summed, as one query would. */
    const struct profile **profiles = malloc(n * sizeof *profiles);
    if (!profiles)
        return mp_error_set(err, "out of memory");
    for (size_t i = 0; i < n; i++)
        profiles[i] = views[i]->profile;
    struct analysis_query check;
    int rc = analysis_query_init(&check, a, o, profiles, n, err);
    free(profiles);
    if (rc < 0)
        return -1;
    analysis_query_fini(&check);
    struct trend_builder *b;
    if (analysis_trend_begin(a, times, n, o, &b, err) < 0)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (analysis_trend_add(b, views[i], err) < 0) {
            analysis_trend_abandon(b);
            return -1;
        }
    return analysis_trend_end(b, out, err);
}

void analysis_trend_free(struct trend *t)
{
    free(t->seconds);
    free(t->total);
    free(t->rows);
    free(t->value_store);
    free(t->site_value_store);
    free(t->site_store);
    memset(t, 0, sizeof *t);
}

/* ---- JSON ---- */

struct json_object *analysis_trend_row_json(const struct analysis *a,
                                            const struct trend *t,
                                            const struct trend_row *r)
{
    json_object *o = json_object_new_object();
    analysis_json_node(o, &a->nodes[r->node], "function");
    if (r->kind == TREND_CALL_SITE) {
        json_object *stack = json_object_new_array();
        for (uint32_t k = 0; k < r->nsite; k++)
            json_object_array_add(stack, json_object_new_string(a->nodes[r->site[k]].name));
        json_object_object_add(o, "stack", stack);
    }
    json_object_object_add(o, "rate_per_hour", json_object_new_double(r->rate));
    json_object_object_add(o, "monotonic", json_object_new_double(r->monotonic));
    json_object_object_add(o, "steady", json_object_new_boolean(r->steady));
    json_object_object_add(o, "p_value", json_object_new_double(r->p_value));
    json_object_object_add(o, "share",
                           isnan(r->share) ? NULL : json_object_new_double(r->share));
    json_object_object_add(o, "first", json_object_new_int64(llround(r->values[0])));
    json_object_object_add(o, "last",
                           json_object_new_int64(llround(r->values[t->npoints - 1])));
    json_object *values = json_object_new_array();
    for (size_t i = 0; i < t->npoints; i++)
        json_object_array_add(values, json_object_new_int64(llround(r->values[i])));
    json_object_object_add(o, "values", values);
    return o;
}

/* ---- "10MiB/h" ---- */

struct unit_word {
    const char *word;
    double factor;
};

static const struct unit_word size_units[] = {
    {"", 1}, {"B", 1},
    {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0},
    {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9},
};

static const struct unit_word time_units[] = {
    {"s", 3600}, {"sec", 3600}, {"min", 60}, {"m", 60},
    {"h", 1}, {"hour", 1}, {"d", 1.0 / 24}, {"day", 1.0 / 24},
};

static bool find_unit(const struct unit_word *u, size_t n, const char *w, size_t len,
                      double *factor)
{
    for (size_t i = 0; i < n; i++)
        if (strlen(u[i].word) == len && strncasecmp(u[i].word, w, len) == 0) {
            *factor = u[i].factor;
            return true;
        }
    return false;
}

int analysis_parse_rate(const char *text, double *per_hour, struct mp_error *err)
{
    static const char example[] = "give bytes per time, e.g. 10MiB/h, 512KiB/min or 1GB/d "
                                  "(B, KiB, MiB, GiB, KB, MB, GB per s, min, h or d)";
    const char *p = text;
    if (!isdigit((unsigned char)*p) && !(*p == '.' && isdigit((unsigned char)p[1])))
        return mp_error_set(err, "'%s' is not a growth rate: %s", text, example);
    char *end;
    double v = strtod(p, &end);
    if (strspn(p, "0123456789.eE+-") < (size_t)(end - p))   /* no hex, no "inf" */
        return mp_error_set(err, "'%s' is not a growth rate: %s", text, example);
    const char *slash = strchr(end, '/');
    if (!slash)
        return mp_error_set(err, "'%s' has no time unit: %s", text, example);
    double size_factor, time_factor;
    if (!find_unit(size_units, sizeof size_units / sizeof *size_units, end,
                   (size_t)(slash - end), &size_factor))
        return mp_error_set(err, "'%s': '%.*s' is not a size unit: %s", text,
                            (int)(slash - end), end, example);
    if (!find_unit(time_units, sizeof time_units / sizeof *time_units, slash + 1,
                   strlen(slash + 1), &time_factor))
        return mp_error_set(err, "'%s': '%s' is not a time unit: %s", text, slash + 1,
                            example);
    double r = v * size_factor * time_factor;
    if (!isfinite(r))
        return mp_error_set(err, "'%s' is too large a growth rate: %s", text, example);
    *per_hour = r;
    return 0;
}
