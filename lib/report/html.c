/* html.c - the HTML report (lib/report/html.h): the page's layout and
 * style, its SVG line chart and sparklines, and its tables; the flame
 * graph is analysis_flame's own SVG and the top and growth numbers come
 * from the engines (analysis_top_rows, analysis_trend).
 *
 * The page's own classes and ids start with "mp-": the flame graph's
 * inline style and script address "f", "hide", "btn", "caller" and the
 * ids "unzoom", "search", "matched", "details" document-wide once the SVG
 * sits in an HTML page, and Graphviz's SVG uses "node", "edge", "graph". */
#include "lib/report/html.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/analysis/trend.h"
#include "lib/base/text_escape.h"

enum {
    TOP_ROWS = 25,             /* rows of the top table */
    GROWTH_ROWS = 15,          /* rows of the growth table */
    CHART_LINES = 5,           /* growing functions drawn in the chart */
    CHART_POINT_MARKS = 60,    /* at most this many dumps get a dot each */
};

/* The chart's colours: the total in near-black, the functions in colours
 * told apart also by people with the commonest colour blindness. */
#define TOTAL_COLOUR "#222222"
static const char *const line_colours[CHART_LINES] = {
    "#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd",
};

static const char page_style[] =
    "body { font-family: system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif;"
    " margin: 0; background: #f4f5f7; color: #1d2330 }\n"
    ".mp-head { background: #1d2b45; color: #fff; padding: 18px 28px }\n"
    ".mp-head h1 { margin: 0; font-size: 22px; font-weight: 600 }\n"
    ".mp-head p { margin: 4px 0 0; color: #c8d2e6; font-size: 14px }\n"
    ".mp-main { padding: 8px 28px 40px; max-width: 1400px }\n"
    ".mp-card { background: #fff; border-radius: 8px; padding: 14px 20px; margin: 16px 0;"
    " box-shadow: 0 1px 3px rgba(0,0,0,.12) }\n"
    ".mp-card h2 { font-size: 17px; margin: 0 0 10px; font-weight: 600 }\n"
    ".mp-facts { display: grid; grid-template-columns: repeat(auto-fill, minmax(220px, 1fr));"
    " gap: 10px 24px; margin: 0 }\n"
    ".mp-facts div { min-width: 0 }\n"
    ".mp-facts dt { font-size: 12px; color: #5b6477; text-transform: uppercase;"
    " letter-spacing: .04em }\n"
    ".mp-facts dd { margin: 2px 0 0; font-size: 16px; overflow-wrap: anywhere }\n"
    ".mp-grow { color: #b3261e; font-weight: 600 }\n"
    ".mp-note { background: #fff6da; border-left: 4px solid #e0a800; padding: 8px 12px;"
    " margin: 8px 0; font-size: 14px }\n"
    ".mp-table { border-collapse: collapse; width: 100%; font-size: 13px }\n"
    ".mp-table th { text-align: right; color: #5b6477; font-weight: 600; padding: 4px 8px;"
    " border-bottom: 2px solid #d9dde5; white-space: nowrap }\n"
    ".mp-table td { text-align: right; padding: 3px 8px; border-bottom: 1px solid #eceef2;"
    " white-space: nowrap; font-variant-numeric: tabular-nums }\n"
    ".mp-table th.mp-name, .mp-table td.mp-name { text-align: left; white-space: normal;"
    " overflow-wrap: anywhere; font-family: ui-monospace, Menlo, Consolas, monospace }\n"
    ".mp-table tr:hover td { background: #f3f6fb }\n"
    ".mp-bar { display: inline-block; height: 8px; background: #6b8bd6; border-radius: 2px;"
    " vertical-align: middle; margin-right: 6px }\n"
    ".mp-legend { list-style: none; padding: 0; margin: 6px 0 0; font-size: 13px }\n"
    ".mp-legend li { display: inline-block; margin: 2px 18px 2px 0;"
    " font-family: ui-monospace, Menlo, Consolas, monospace }\n"
    ".mp-swatch { display: inline-block; width: 18px; height: 4px; margin-right: 6px;"
    " vertical-align: middle; border-radius: 2px }\n"
    ".mp-scroll { overflow: auto; max-height: 1000px }\n"
    "#mp-graph svg { max-width: 100%; height: auto }\n"
    ".mp-chart text { font-size: 12px; fill: #5b6477 }\n"
    ".mp-small { color: #5b6477; font-size: 13px }\n";

/* ---- small writers ---- */

static void put_text(FILE *out, const char *s)
{
    text_markup_put(out, s ? s : "", SIZE_MAX);
}

/* "2026-11-23 21:40:05 +0000", local time. */
static void put_time(FILE *out, int64_t t)
{
    struct tm tm;
    time_t tt = (time_t)t;
    char b[64];
    if (t == 0 || !localtime_r(&tt, &tm) || !strftime(b, sizeof b, "%Y-%m-%d %H:%M:%S %z", &tm))
        snprintf(b, sizeof b, "unknown");
    fputs(b, out);
}

/* "1 h 2 min", "42 s": a span for people. */
static char *format_span(double secs, char *buf, size_t len)
{
    long s = lround(secs);
    if (s < 60)
        snprintf(buf, len, "%ld s", s);
    else if (s < 3600)
        snprintf(buf, len, "%ld min %ld s", s / 60, s % 60);
    else if (s < 86400)
        snprintf(buf, len, "%ld h %ld min", s / 3600, s % 3600 / 60);
    else
        snprintf(buf, len, "%ld d %ld h", s / 86400, s % 86400 / 3600);
    return buf;
}

static char *format_rate(const struct analysis_options *o, double per_hour, char *buf,
                         size_t len)
{
    char v[32];
    snprintf(buf, len, "%s/h", analysis_format(o, per_hour, true, v, sizeof v));
    return buf;
}

static void fact(FILE *out, const char *label, const char *value_html)
{
    fprintf(out, "<div><dt>%s</dt><dd>%s</dd></div>\n", label, value_html);
}

/* ---- what the page is about ---- */

struct page {
    const struct report_html_input *in;
    FILE *out;
    const struct analysis_options *o;
    const struct analysis_node *nodes;
    struct trend trend;        /* when over_time */
    bool over_time;
    char why_not[512];         /* when not over_time */
    const struct trend_row *lines[CHART_LINES];   /* the chart's functions */
    size_t nlines;
};

static const struct report_html_dump *first_dump(const struct page *p)
{
    return &p->in->dumps[0];
}

static const struct report_html_dump *last_dump(const struct page *p)
{
    return &p->in->dumps[p->in->ndumps - 1];
}

/* Whether the series can be drawn over time; else why not, in why_not. */
static bool can_go_over_time(struct page *p)
{
    const struct report_html_input *in = p->in;
    if (in->ndumps < 2) {
        snprintf(p->why_not, sizeof p->why_not, "This report has one dump only: the "
                 "over-time parts (the chart of memory in use, the growth table and the "
                 "growth flame graph) need 2 or more dumps of the process, taken some "
                 "time apart.");
        return false;
    }
    for (size_t i = 0; i < in->ndumps; i++) {
        if (in->dumps[i].taken_at == 0) {
            snprintf(p->why_not, sizeof p->why_not, "When one of the dumps was taken is "
                     "not known, so the over-time parts (the chart, the growth table and "
                     "the growth flame graph) are left out.");
            return false;
        }
        if (i > 0 && in->dumps[i].taken_at < in->dumps[i - 1].taken_at) {
            snprintf(p->why_not, sizeof p->why_not, "The dumps are not in the order they "
                     "were taken, so the over-time parts are left out.");
            return false;
        }
    }
    if (last_dump(p)->taken_at == first_dump(p)->taken_at) {
        snprintf(p->why_not, sizeof p->why_not, "The %zu dumps were all taken within "
                 "one second: the over-time parts (the chart, the growth table and the "
                 "growth flame graph) need dumps some time apart.", in->ndumps);
        return false;
    }
    return true;
}

bool report_html_over_time(const struct report_html_input *in)
{
    struct page p = {.in = in};
    return can_go_over_time(&p);
}

static int compute_trend(struct page *p, struct mp_error *err)
{
    const struct report_html_input *in = p->in;
    const struct analysis_view **views = in->trend ? NULL : malloc(in->ndumps * sizeof *views);
    double *times = in->trend ? NULL : malloc(in->ndumps * sizeof *times);
    int rc = -1;
    if (in->trend) {
        p->trend = *in->trend;         /* the caller's: not freed here */
        rc = 0;
    } else if (!views || !times) {
        mp_error_set(err, "out of memory");
    } else {
        for (size_t i = 0; i < in->ndumps; i++) {
            views[i] = in->dumps[i].view;
            times[i] = (double)in->dumps[i].taken_at;
        }
        rc = analysis_trend(in->a, views, times, in->ndumps, p->o, &p->trend, err);
    }
    free(views);
    free(times);
    if (rc < 0)
        return -1;
    /* The chart's lines: the first functions of the ranking that grew. */
    for (size_t i = 0; i < p->trend.nrows && p->nlines < CHART_LINES; i++) {
        const struct trend_row *r = &p->trend.rows[i];
        if (r->kind == TREND_FUNCTION && r->rate > 0)
            p->lines[p->nlines++] = r;
    }
    return 0;
}

/* ---- the summary ---- */

static void put_summary(struct page *p)
{
    const struct report_html_input *in = p->in;
    FILE *out = p->out;
    const struct profile *first = first_dump(p)->view->profile;
    const struct profile *last = last_dump(p)->view->profile;
    char a[32], b[32], c[64], r[48];
    fputs("<section class=\"mp-card\" id=\"mp-summary\"><h2>Summary</h2><dl class=\"mp-facts\">\n",
          out);
    fputs("<div><dt>Process</dt><dd>", out);
    if (in->pid > 0)
        fprintf(out, "pid %ld", in->pid);
    else
        fputs("not attached (dumps read from files)", out);
    fputs("</dd></div>\n", out);
    if (in->exe) {
        fputs("<div><dt>Executable</dt><dd>", out);
        put_text(out, in->exe);
        fputs("</dd></div>\n", out);
    }
    fputs("<div><dt>Series</dt><dd>", out);
    if (in->series)
        put_text(out, in->series);
    else
        fputs("the session's dumps", out);
    fputs("</dd></div>\n", out);
    snprintf(c, sizeof c, "%zu", in->ndumps);
    fact(out, "Dumps", c);
    fputs("<div><dt>First dump</dt><dd>", out);
    put_time(out, first_dump(p)->taken_at);
    fputs("</dd></div>\n<div><dt>Last dump</dt><dd>", out);
    put_time(out, last_dump(p)->taken_at);
    fputs("</dd></div>\n", out);
    if (p->over_time)
        fact(out, "Time span", format_span((double)(last_dump(p)->taken_at -
                                                    first_dump(p)->taken_at), c, sizeof c));
    bool objects = p->o->objects;
    double v0 = objects ? first->total.inuse_objects : first->total.inuse_bytes;
    double v1 = objects ? last->total.inuse_objects : last->total.inuse_bytes;
    fprintf(out, "<div><dt>In use%s, first &#8594; last</dt><dd>%s &#8594; %s "
            "<span class=\"mp-grow\">(%s)</span></dd></div>\n", objects ? " (objects)" : "",
            analysis_format(p->o, v0, false, a, sizeof a),
            analysis_format(p->o, v1, false, b, sizeof b),
            analysis_format(p->o, v1 - v0, true, c, sizeof c));
    if (p->over_time)
        fprintf(out, "<div><dt>Growth rate of the total</dt><dd class=\"mp-grow\">%s</dd>"
                "</div>\n", format_rate(p->o, p->trend.total_rate, r, sizeof r));
    if (last->period)
        fprintf(out, "<div><dt>Sampling</dt><dd>one in %s on average</dd></div>\n",
                analysis_format_bytes((double)last->period, false, false, a, sizeof a));
    fputs("<div><dt>Report made</dt><dd>", out);
    put_time(out, in->generated_at);
    fputs("</dd></div>\n</dl>\n", out);
    if (!p->over_time) {
        fputs("<p class=\"mp-note\" id=\"mp-no-trend\">", out);
        put_text(out, p->why_not);
        fputs("</p>\n", out);
    }
    fputs("</section>\n", out);
}

/* ---- the chart ---- */

enum { CH_W = 1000, CH_H = 340, CH_L = 90, CH_R = 40, CH_T = 16, CH_B = 44 };

struct axis {
    double lo, hi;             /* the values at the ends */
};

static double x_of(const struct axis *x, double t)
{
    return CH_L + (t - x->lo) / (x->hi - x->lo) * (CH_W - CH_L - CH_R);
}

static double y_of(const struct axis *y, double v)
{
    return CH_H - CH_B - (v - y->lo) / (y->hi - y->lo) * (CH_H - CH_T - CH_B);
}

/* A round step (1, 2 or 5 times a power of ten) giving about 5 ticks. */
static double nice_step(double range)
{
    double raw = range / 5, mag = pow(10, floor(log10(raw)));
    double n = raw / mag;
    return (n <= 1 ? 1 : n <= 2 ? 2 : n <= 5 ? 5 : 10) * mag;
}

static void put_y_axis(FILE *out, const struct analysis_options *o, const struct axis *y)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double unit = 1;
    size_t k = 0;
    while (!o->objects && y->hi / unit >= 1024 && k + 1 < sizeof units / sizeof *units) {
        unit *= 1024;
        k++;
    }
    double step = nice_step(y->hi / unit) * unit;
    for (double v = 0; v <= y->hi * 1.0001; v += step) {
        double py = y_of(y, v);
        fprintf(out, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#e3e6ec\"/>"
                "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g%s%s</text>\n",
                CH_L, CH_W - CH_R, py, py, CH_L - 8, py + 4, v / unit,
                o->objects ? "" : " ", o->objects ? "" : units[k]);
    }
}

/* Ticks at round clock times: a step from seconds to weeks giving at
 * most 6, labelled in local time. */
static void put_x_axis(FILE *out, const struct axis *x)
{
    static const int steps[] = {1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600,
                                7200, 10800, 21600, 43200, 86400, 172800, 604800};
    double span = x->hi - x->lo;
    int step = steps[sizeof steps / sizeof *steps - 1];
    for (size_t i = 0; i < sizeof steps / sizeof *steps; i++)
        if (span / steps[i] <= 6) {
            step = steps[i];
            break;
        }
    struct tm tm;
    time_t t0 = (time_t)x->lo;
    long offset = localtime_r(&t0, &tm) ? tm.tm_gmtoff : 0;
    const char *fmt = step < 60 ? "%H:%M:%S" : step < 86400 ? (span >= 86400 ? "%m-%d %H:%M"
                                                                           : "%H:%M") : "%Y-%m-%d";
    double first = ceil((x->lo + offset) / step) * step - offset;
    for (double t = first; t <= x->hi + 1e-9; t += step) {
        time_t tt = (time_t)t;
        char label[32] = "";
        if (localtime_r(&tt, &tm))
            strftime(label, sizeof label, fmt, &tm);
        double px = x_of(x, t);
        fprintf(out, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" stroke=\"#e3e6ec\"/>"
                "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
                px, px, CH_T, CH_H - CH_B, px, CH_H - CH_B + 18, label);
    }
    fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">time (local)</text>\n",
            (CH_L + CH_W - CH_R) / 2, CH_H - 6);
}

/* One line of the chart, with a <title> naming it (hover). */
static void put_line(struct page *p, const struct axis *x, const struct axis *y,
                     const double *values, const char *series, const char *colour,
                     double width, const char *name)
{
    FILE *out = p->out;
    fprintf(out, "<polyline class=\"mp-line\" data-series=\"%s\" fill=\"none\" "
            "stroke=\"%s\" stroke-width=\"%.1f\" stroke-linejoin=\"round\" points=\"",
            series, colour, width);
    for (size_t i = 0; i < p->trend.npoints; i++)
        fprintf(out, "%s%.1f,%.1f", i ? " " : "", x_of(x, (double)first_dump(p)->taken_at +
                                                             p->trend.seconds[i]),
                y_of(y, values[i]));
    fputs("\"><title>", out);
    put_text(out, name);
    fputs("</title></polyline>\n", out);
}

/* A dot per dump on the total's line, its numbers on hover. */
static void put_marks(struct page *p, const struct axis *x, const struct axis *y)
{
    if (p->trend.npoints > CHART_POINT_MARKS)
        return;
    for (size_t i = 0; i < p->trend.npoints; i++) {
        const struct report_html_dump *d = &p->in->dumps[i];
        char v[32];
        fprintf(p->out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"" TOTAL_COLOUR "\">"
                "<title>", x_of(x, (double)d->taken_at), y_of(y, p->trend.total[i]));
        put_text(p->out, d->name);
        fputs(", ", p->out);
        put_time(p->out, d->taken_at);
        fprintf(p->out, ": %s in use</title></circle>\n",
                analysis_format(p->o, p->trend.total[i], false, v, sizeof v));
    }
}

static void put_chart(struct page *p)
{
    FILE *out = p->out;
    struct axis x = {(double)first_dump(p)->taken_at, (double)last_dump(p)->taken_at};
    struct axis y = {0, 0};
    for (size_t i = 0; i < p->trend.npoints; i++) {
        y.hi = fmax(y.hi, p->trend.total[i]);
        for (size_t k = 0; k < p->nlines; k++)
            y.hi = fmax(y.hi, p->lines[k]->values[i]);
    }
    y.hi = y.hi > 0 ? y.hi * 1.05 : 1;
    fprintf(out, "<section class=\"mp-card\" id=\"mp-over-time\"><h2>%s in use over time"
            "</h2>\n<svg id=\"mp-chart\" class=\"mp-chart\" xmlns=\"http://www.w3.org/2000/svg\" "
            "width=\"100%%\" viewBox=\"0 0 %d %d\" preserveAspectRatio=\"xMinYMin meet\" "
            "role=\"img\" aria-label=\"in use over time\" style=\"max-width: %dpx\">\n",
            p->o->objects ? "Objects" : "Memory", CH_W, CH_H, CH_W + 200);
    put_y_axis(out, p->o, &y);
    put_x_axis(out, &x);
    fprintf(out, "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"#8a93a6\"/>\n",
            CH_L, CH_W - CH_R, CH_H - CH_B, CH_H - CH_B);
    /* Functions first, so that the total is drawn over them. */
    for (size_t k = 0; k < p->nlines; k++) {
        char series[32];
        snprintf(series, sizeof series, "fn%zu", k + 1);
        put_line(p, &x, &y, p->lines[k]->values, series, line_colours[k], 2,
                 p->nodes[p->lines[k]->node].name);
    }
    put_line(p, &x, &y, p->trend.total, "total", TOTAL_COLOUR, 3, "total in use");
    put_marks(p, &x, &y);
    fputs("</svg>\n<ul class=\"mp-legend\" id=\"mp-legend\"><li><span class=\"mp-swatch\" "
          "style=\"background:" TOTAL_COLOUR "\"></span>total in use</li>\n", out);
    for (size_t k = 0; k < p->nlines; k++) {
        char r[48];
        fprintf(out, "<li><span class=\"mp-swatch\" style=\"background:%s\"></span>",
                line_colours[k]);
        put_text(out, p->nodes[p->lines[k]->node].name);
        fprintf(out, " <span class=\"mp-small\">(%s)</span></li>\n",
                format_rate(p->o, p->lines[k]->rate, r, sizeof r));
    }
    fputs("</ul>\n", out);
    if (p->nlines == 0)
        fputs("<p class=\"mp-small\">No function grew over the series.</p>\n", out);
    else
        fputs("<p class=\"mp-small\">The coloured lines are what the fastest steadily "
              "growing functions hold themselves (flat), on the same scale as the total.</p>\n",
              out);
    fputs("</section>\n", out);
}

/* ---- the tables ---- */

/* A small line of one row's values, on a scale of its own. */
static void put_sparkline(FILE *out, const double *v, size_t n)
{
    enum { W = 120, H = 22 };
    double lo = v[0], hi = v[0];
    for (size_t i = 1; i < n; i++) {
        lo = fmin(lo, v[i]);
        hi = fmax(hi, v[i]);
    }
    fprintf(out, "<svg class=\"mp-spark\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">"
            "<polyline fill=\"none\" stroke=\"#b3261e\" stroke-width=\"1.5\" points=\"",
            W, H, W, H);
    for (size_t i = 0; i < n; i++)
        fprintf(out, "%s%.1f,%.1f", i ? " " : "", n > 1 ? 2 + (double)i * (W - 4) / (n - 1) : W / 2.0,
                hi > lo ? H - 2 - (v[i] - lo) / (hi - lo) * (H - 4) : H / 2.0);
    fputs("\"/></svg>", out);
}

static void put_growth_table(struct page *p)
{
    FILE *out = p->out;
    const struct trend *t = &p->trend;
    fputs("<section class=\"mp-card\" id=\"mp-growth\"><h2>What grows</h2>\n"
          "<p class=\"mp-small\">Functions ranked by how steadily their in-use memory "
          "grows across the series: rate is the median slope between every two dumps "
          "(Theil-Sen), monotonic is Kendall's tau (1: it never went down), steady means "
          "a rise that chance alone would give less than 1% of the time, share is the "
          "function's part of the total's growth.</p>\n"
          "<table class=\"mp-table\" id=\"mp-growth-table\"><thead><tr><th>#</th>"
          "<th>rate</th><th>monotonic</th><th>steady</th><th>share</th><th>first</th>"
          "<th>last</th><th>over time</th><th class=\"mp-name\">function</th></tr></thead>"
          "<tbody>\n", out);
    size_t shown = 0;
    for (size_t i = 0; i < t->nrows && shown < GROWTH_ROWS; i++) {
        const struct trend_row *r = &t->rows[i];
        if (r->kind != TREND_FUNCTION)
            continue;
        char rate[48], first[32], last[32], share[16];
        if (isnan(r->share))
            snprintf(share, sizeof share, "-");
        else
            snprintf(share, sizeof share, "%.1f%%", 100 * r->share);
        fprintf(out, "<tr><td>%zu</td><td class=\"mp-grow\">%s</td><td>%.2f</td><td>%s</td>"
                "<td>%s</td><td>%s</td><td>%s</td><td>", ++shown,
                format_rate(p->o, r->rate, rate, sizeof rate), r->monotonic,
                r->steady ? "yes" : "", share,
                analysis_format(p->o, r->values[0], false, first, sizeof first),
                analysis_format(p->o, r->values[t->npoints - 1], false, last, sizeof last));
        put_sparkline(out, r->values, t->npoints);
        fputs("</td><td class=\"mp-name\">", out);
        put_text(out, p->nodes[r->node].name);
        fputs("</td></tr>\n", out);
    }
    fputs("</tbody></table>\n</section>\n", out);
}

static int put_top_table(struct page *p, struct mp_error *err)
{
    FILE *out = p->out;
    const struct report_html_dump *d = last_dump(p);
    struct analysis_top_row *rows;
    size_t n;
    struct analysis_amount total;
    if (analysis_top_rows(p->in->a, d->view, p->o, &rows, &n, &total, err) < 0)
        return -1;
    double sum = analysis_key(p->o, total);
    char v[32];
    fputs("<section class=\"mp-card\" id=\"mp-top\"><h2>Top functions in ", out);
    put_text(out, d->name);
    fprintf(out, "</h2>\n<p class=\"mp-small\">The latest dump: flat is what a function "
            "holds itself, cum what it holds with everything it calls.  Total: %s.</p>\n"
            "<table class=\"mp-table\" id=\"mp-top-table\"><thead><tr><th>#</th><th>flat</th>"
            "<th>flat%%</th><th>cum</th><th>cum%%</th><th class=\"mp-name\">function</th>"
            "</tr></thead><tbody>\n", analysis_format(p->o, sum, false, v, sizeof v));
    for (size_t i = 0; i < n && i < TOP_ROWS; i++) {
        double flat = analysis_key(p->o, rows[i].flat), cum = analysis_key(p->o, rows[i].cum);
        char f[32], fp[16], c[32], cp[16];
        double bar = sum > 0 ? fmax(0, fmin(1, flat / sum)) : 0;
        fprintf(out, "<tr><td>%zu</td><td>%s</td><td><span class=\"mp-bar\" "
                "style=\"width:%.0fpx\"></span>%s</td><td>%s</td><td>%s</td>"
                "<td class=\"mp-name\">", i + 1, analysis_format(p->o, flat, false, f, sizeof f),
                60 * bar, analysis_percent(flat, sum, fp, sizeof fp),
                analysis_format(p->o, cum, false, c, sizeof c),
                analysis_percent(cum, sum, cp, sizeof cp));
        put_text(out, p->nodes[rows[i].node].name);
        fputs("</td></tr>\n", out);
    }
    if (n == 0)
        fputs("<tr><td colspan=\"6\" class=\"mp-name\">nothing in use</td></tr>\n", out);
    fputs("</tbody></table>\n</section>\n", out);
    free(rows);
    return 0;
}

/* ---- the pictures ---- */

/* An SVG document's text from its <svg element on: the XML declaration
 * and doctype before it mean nothing inside HTML. */
static void put_svg_element(FILE *out, const char *svg, size_t len)
{
    const char *start = memmem(svg, len, "<svg", 4);
    if (start)
        fwrite(start, 1, len - (size_t)(start - svg), out);
}

static int put_flame(struct page *p, struct mp_error *err)
{
    FILE *out = p->out;
    const struct report_html_dump *d = last_dump(p), *base = p->over_time ? first_dump(p) : NULL;
    struct analysis_source src = {d->name, base ? base->name : NULL};
    struct analysis_flame_options fo = {0};
    char *svg = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&svg, &len);
    if (!mem)
        return mp_error_set(err, "out of memory");
    int rc = analysis_flame(p->in->a, d->view, base ? base->view : NULL, p->o, &src, &fo,
                            mem, err);
    if (fclose(mem) != 0 && rc == 0)
        rc = mp_error_set(err, "out of memory");
    if (rc == 0) {
        fputs("<section class=\"mp-card\" id=\"mp-flame\"><h2>", out);
        if (base) {
            fputs("Growth flame graph: ", out);
            put_text(out, base->name);
            fputs(" &#8594; ", out);
        } else {
            fputs("Flame graph: ", out);
        }
        put_text(out, d->name);
        fprintf(out, "</h2>\n<p class=\"mp-small\">%s Click a frame to zoom, "
                "Search to highlight functions, Escape to reset.</p>\n<div class=\"mp-scroll\">",
                base ? "Widths are the latest dump's; red grew since the first dump, blue "
                       "shrank." : "Widths are what each call path holds.");
        put_svg_element(out, svg, len);
        fputs("</div>\n</section>\n", out);
    }
    free(svg);
    return rc;
}

static void put_graph(struct page *p)
{
    FILE *out = p->out;
    fputs("<section class=\"mp-card\" id=\"mp-graph\"><h2>Call graph of ", out);
    put_text(out, last_dump(p)->name);
    fputs("</h2>\n", out);
    if (p->in->graph_svg) {
        fputs("<div class=\"mp-scroll\">", out);
        put_svg_element(out, p->in->graph_svg, p->in->graph_svg_len);
        fputs("</div>\n", out);
    } else {
        fputs("<p class=\"mp-note\" id=\"mp-no-graph\">No call graph: ", out);
        put_text(out, p->in->graph_note ? p->in->graph_note : "it could not be drawn");
        fputs("</p>\n", out);
    }
    fputs("</section>\n", out);
}

static void put_dumps(struct page *p)
{
    FILE *out = p->out;
    fputs("<section class=\"mp-card\" id=\"mp-dumps\"><h2>Dumps</h2>\n<table class=\"mp-table\">"
          "<thead><tr><th class=\"mp-name\">dump</th><th>taken</th><th>in use</th>"
          "<th>objects</th><th>stacks</th></tr></thead><tbody>\n", out);
    for (size_t i = 0; i < p->in->ndumps; i++) {
        const struct report_html_dump *d = &p->in->dumps[i];
        char b[32];
        fputs("<tr><td class=\"mp-name\">", out);
        put_text(out, d->name);
        fputs("</td><td>", out);
        put_time(out, d->taken_at);
        fprintf(out, "</td><td>%s</td><td>%.0f</td><td>%zu</td></tr>\n",
                analysis_format_bytes(d->inuse_bytes, false, false, b, sizeof b),
                d->inuse_objects, d->nstacks);
    }
    fputs("</tbody></table>\n</section>\n", out);
}

/* ---- the page ---- */

static void put_head(struct page *p)
{
    const struct report_html_input *in = p->in;
    FILE *out = p->out;
    /* No fetch of any kind; only the page's own inline style and script
     * (the flame graph's) run. */
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
          "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
          "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<title>memprof report", out);
    if (in->exe) {
        fputs(": ", out);
        put_text(out, in->exe);
    }
    if (in->pid > 0)
        fprintf(out, " (pid %ld)", in->pid);
    fprintf(out, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<header class=\"mp-head\">"
            "<h1>memprof report</h1><p>", page_style);
    if (in->exe)
        put_text(out, in->exe);
    else
        fputs("heap profiles", out);
    if (in->pid > 0)
        fprintf(out, " &#183; pid %ld", in->pid);
    fprintf(out, " &#183; %zu dump%s", in->ndumps, in->ndumps == 1 ? "" : "s");
    if (in->series) {
        fputs(" &#183; series ", out);
        put_text(out, in->series);
    }
    fputs("</p></header>\n<main class=\"mp-main\">\n", out);
}

int report_html(const struct report_html_input *in, FILE *out, struct mp_error *err)
{
    if (in->ndumps == 0)
        return mp_error_set(err, "no dump to report on");
    struct page p = {.in = in, .out = out, .o = in->o, .nodes = in->a->nodes};
    p.over_time = can_go_over_time(&p);
    if (p.over_time && compute_trend(&p, err) < 0)
        return -1;
    put_head(&p);
    put_summary(&p);
    int rc = 0;
    if (p.over_time) {
        put_chart(&p);
        put_growth_table(&p);
    }
    if (put_top_table(&p, err) < 0 || put_flame(&p, err) < 0)
        rc = -1;
    if (rc == 0) {
        put_graph(&p);
        put_dumps(&p);
        fputs("</main>\n</body>\n</html>\n", out);
    }
    if (p.over_time && !in->trend)
        analysis_trend_free(&p.trend);
    return rc;
}
