/* trend.h - which functions and call sites grow steadily across a
 * series of heap profiles of one process (a profiling run's dumps).
 *
 * A leak among churn: a function whose in-use bytes go up and down by a
 * lot has a large least-squares slope by chance; a leak's sampled in-use
 * bytes only ever rise (a sampled object that is never freed stays in
 * every later dump).  So each row gets a robust rate (the median of the
 * slopes between every pair of points, Theil-Sen), how monotonic its
 * series is (Kendall's tau over time, 0..1 after clamping: 1 = never went
 * down), and its share of the series' total growth; rows are ranked by the
 * rate weighted by that steadiness, so a slow steady leak outranks a large
 * random walk.
 *
 * The engine computes (lib/analysis/trend.c) and gives a row as JSON, the
 * same for every document that shows one; the tables, the sparkline and
 * the rest of a document live with the commands that show them. */
#ifndef MEMPROF_ANALYSIS_TREND_H
#define MEMPROF_ANALYSIS_TREND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/analysis/analysis.h"

enum trend_kind {
    TREND_FUNCTION,    /* a node (function, line, file... per granularity):
                        * its flat in-use bytes, or cumulative with o->cum */
    TREND_CALL_SITE,   /* one whole stack (the same node ids innermost first) */
};

struct trend_row {
    enum trend_kind kind;
    uint32_t node;             /* TREND_FUNCTION: the node; CALL_SITE: the
                                * innermost node of the stack */
    const uint32_t *site;      /* TREND_CALL_SITE: node ids, innermost first */
    uint32_t nsite;
    double *values;            /* in-use bytes (objects with o->objects) at
                                * each point: npoints of them */
    double rate;               /* Theil-Sen slope, units per hour */
    double monotonic;          /* Kendall's tau clamped to 0..1 */
    double share;              /* (last - first) / total's (last - first);
                                * NAN when the total did not grow */
    double score;              /* rate * monotonic */
    double p_value;            /* Mann-Kendall, one-sided: the chance that
                                * noise alone rises this steadily */
    bool steady;               /* p_value < TREND_STEADY_P: ranked before
                                * every row that is not (see below) */
};

/* How unlikely by chance a rise must be for a row to count as steady.
 * The ranking is steady rows first, each group by score: rate * monotonic
 * alone lets a large enough random up-and-down (whose tau is often 0.3-0.5
 * by chance) outrank any small leak, while a leak's sampled bytes never go
 * down, so its rise is significant after a handful of points.  0.1%: a
 * report has a few rows of churn, and one of them passing by chance would
 * put it above the leak; a perfectly rising series passes from 8 points
 * on (a run of 20 s with a dump every 2 s has 10 or 11).  With fewer,
 * nothing is steady and the order is by score alone. */
#define TREND_STEADY_P 0.001

/* Above this many points, the rate and tau are computed over this many
 * evenly spaced ones (pairs grow as the square). */
#define TREND_MAX_PAIR_POINTS 120

struct trend {
    size_t npoints;
    double *seconds;           /* each point's time, seconds after the first */
    double *total;             /* the whole profile's in-use value per point */
    double total_rate;         /* the total's Theil-Sen slope per hour */
    struct trend_row *rows;    /* ranked: highest score first; rows that
                                * never held anything are left out */
    size_t nrows;
    /* storage for values and sites: owned, freed by analysis_trend_free */
    double *value_store, *site_value_store;
    uint32_t *site_store;
};

/* Compute the trend of views[0..n) (one analysis context, so node ids are
 * shared), taken at times[i] (seconds, any origin, non-decreasing; at
 * least 2 points and a positive span, else err says so).  Honours the
 * common options (--focus/--ignore/--hide, --thread, --objects, --cum for
 * functions, --alloc is refused: growth is of what is in use).  Returns
 * 0, or -1 with err set (also when cancelled). */
int analysis_trend(struct analysis *a, const struct analysis_view *const *views,
                   const double *times, size_t n, const struct analysis_options *o,
                   struct trend *out, struct mp_error *err);
void analysis_trend_free(struct trend *t);

/* The same one point at a time, so that a long series never needs every
 * view at once: begin with the times of all n points (checked as above),
 * add each point's view in order (it may be forgotten right after: only
 * per-node and per-call-site sums are kept, a few doubles per row and
 * point), then end, which fills out and frees the builder (also on
 * error).  analysis_trend_abandon frees a builder not ended.  The answer
 * is the same as analysis_trend's over the same views. */
struct trend_builder;
int analysis_trend_begin(struct analysis *a, const double *times, size_t n,
                         const struct analysis_options *o, struct trend_builder **b,
                         struct mp_error *err);
int analysis_trend_add(struct trend_builder *b, const struct analysis_view *v,
                       struct mp_error *err);
int analysis_trend_end(struct trend_builder *b, struct trend *out, struct mp_error *err);
void analysis_trend_abandon(struct trend_builder *b);

/* One row as a JSON object, for the commands' --json documents:
 * "function" (and function_name/file/line, as in top's rows) of the node,
 * for a call site also "stack" (names innermost first), then
 * rate_per_hour, monotonic, steady, p_value, share (null when the total
 * did not grow), first, last and "values" (one per point). */
struct json_object;
struct json_object *analysis_trend_row_json(const struct analysis *a,
                                            const struct trend *t,
                                            const struct trend_row *r);

/* Parse a growth rate like "10MiB/h", "512KiB/min", "1GB/d", "300/s"
 * (bytes; B, KiB/MiB/GiB powers of 1024, KB/MB/GB of 1000;
 * per s, min, h or d) into units per hour.  0, or -1 with err set. */
int analysis_parse_rate(const char *text, double *per_hour, struct mp_error *err);

#endif
