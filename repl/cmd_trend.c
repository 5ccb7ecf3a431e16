/* cmd_trend.c - `trend` (which functions and call sites grow steadily
 * across a series of dumps, with --fail-over for CI) and the live views
 * (`top --watch`, `trend --watch`): fresh dumps every few seconds, redrawn
 * in place on a terminal, one timestamped report per dump otherwise.
 *
 * The statistics are lib/analysis/trend.c's; this file chooses the dumps,
 * their times and how the answer looks (columns, sparklines, JSON). */

#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "lib/analysis/trend.h"
#include "lib/base/array.h"
#include "lib/base/text_escape.h"
#include "repl/cmd_analysis.h"
#include "repl/command_table.h"
#include "session/control.h"
#include "session/sampling.h"
#include "session/say.h"
#include "repl/interrupt.h"
#include "session/json_answer.h"

/* Only rows at least this monotonic can fail --fail-over (see the help). */
#define FAIL_OVER_MONOTONIC 0.5

const char cmd_trend_usage[] =
    "trend [SERIES] [N] [--json] [--fail-over RATE] [--watch S [--count N]] [options]";
const char cmd_trend_summary[] = "what grows steadily across a series of dumps (leaks)";
const char cmd_trend_help[] =
    "Ranks functions and call sites by how steadily their in-use bytes grow\n"
    "across the dumps of SERIES (default: the latest series, or every dump of\n"
    "the session when none is in a series, e.g. files given to memprof):\n"
    "  rate/h     robust growth per hour (Theil-Sen: the median of the slopes\n"
    "             between every two dumps)\n"
    "  mono       how monotonic (Kendall's tau, 0..100%: 100% never went down)\n"
    "  share      its part of the total's growth from the first dump to the last\n"
    "  first->last, and a sparkline of its values across the dumps\n"
    "Rows whose rise noise alone would seldom give (Mann-Kendall, p < 0.1%;\n"
    "a steady rise needs 8 dumps or more to show it) come first, by rate x\n"
    "mono; a line separates them from the rest, so a slow leak outranks a\n"
    "large random up-and-down.  N rows per table (default 10).\n"
    "Dump times are when memprof took them, or a file's modification time.\n"
    "  --fail-over RATE  fail (batch exit status 3) when a function or call site\n"
    "             with mono >= 50% grows faster than RATE, naming them.  RATE is\n"
    "             bytes per time: 10MiB/h, 512KiB/min, 1GB/d (B, KiB, MiB, GiB,\n"
    "             KB, MB, GB; s, min, h, d).  50%: it rose in at least three of\n"
    "             every four pairs of dumps, which churn that only happens to be\n"
    "             higher at the end seldom does, while a leak always does.\n"
    "  --watch S  a live view (needs a process): a fresh dump every S seconds\n"
    "             (0.1 to 3600) into a new series watchN, the trend of the view's\n"
    "             dumps redrawn in place on a terminal (one timestamped report per\n"
    "             dump otherwise); Ctrl-C leaves the view.  --count N: stop after\n"
    "             N dumps (then --fail-over applies to the last trend).\n"
    "  --cum      functions by their cumulative bytes instead of their own\n"
    "  --json     the same as one JSON document (docs/memprof.1, JSON OUTPUT)\n"
    "Also --objects, --focus, --ignore, --hide, --thread, --functions, --lines,\n"
    "--files, --addresses, --bytes, --show-alloc as for 'top'.\n";

/* ---- how rows look ---- */

/* Whether the terminal takes UTF-8, by the locale the environment names
 * (memprof never calls setlocale: text_escape must not change meaning). */
static bool utf8_locale(void)
{
    static const char *const vars[] = {"LC_ALL", "LC_CTYPE", "LANG"};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v)
            return strcasestr(v, "utf-8") || strcasestr(v, "utf8");
    }
    return false;
}

#define SPARK_WIDTH 16

/* The series as SPARK_WIDTH (or fewer) bars from its minimum to its
 * maximum; a flat series is a flat low line. */
static const char *sparkline(const double *v, size_t n, bool utf8, char *buf, size_t len)
{
    static const char *const bars[8] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
    static const char ascii[8] = {'_', '.', '-', '~', '=', '+', '*', '#'};
    size_t w = n < SPARK_WIDTH ? n : SPARK_WIDTH;
    double lo = v[0], hi = v[0];
    for (size_t i = 1; i < n; i++) {
        lo = v[i] < lo ? v[i] : lo;
        hi = v[i] > hi ? v[i] : hi;
    }
    size_t used = 0;
    buf[0] = 0;
    for (size_t k = 0; k < w; k++) {
        size_t i = w == 1 ? 0 : (size_t)llround((double)k * (n - 1) / (w - 1));
        int level = hi > lo ? (int)((v[i] - lo) / (hi - lo) * 7.999) : 0;
        int wrote = utf8 ? snprintf(buf + used, len - used, "%s", bars[level])
                         : snprintf(buf + used, len - used, "%c", ascii[level]);
        if (wrote < 0 || (size_t)wrote >= len - used)
            break;
        used += (size_t)wrote;
    }
    for (size_t k = w; k < SPARK_WIDTH && used + 1 < len; k++)   /* pad to the column */
        buf[used++] = ' ';
    buf[used] = 0;
    return buf;
}

#define CHAIN_FRAMES 4

/* A call site as a short chain, innermost first: "leak < worker < main",
 * each name escaped, at most CHAIN_FRAMES frames then "< ...". */
static const char *site_chain(const struct analysis *a, const struct trend_row *r,
                              char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = 0;
    for (uint32_t k = 0; k < r->nsite && used + 1 < len; k++) {
        char nb[TEXT_ESCAPE_BUF];
        const char *name = k < CHAIN_FRAMES ? text_escape(a->nodes[r->site[k]].name, nb, sizeof nb)
                                            : "...";
        int wrote = snprintf(buf + used, len - used, "%s%s", k ? " < " : "", name);
        if (wrote < 0)
            break;
        used += (size_t)wrote < len - used ? (size_t)wrote : len - used - 1;
        if (k >= CHAIN_FRAMES)
            break;
    }
    return buf;
}

static const char *row_name(const struct analysis *a, const struct trend_row *r,
                            char *buf, size_t len)
{
    if (r->kind == TREND_CALL_SITE)
        return site_chain(a, r, buf, len);
    return text_escape(a->nodes[r->node].name, buf, len);
}

static const char *rate_text(const struct analysis_options *o, double per_hour,
                             char *buf, size_t len)
{
    char v[32];
    snprintf(buf, len, "%s/h", analysis_format(o, per_hour, true, v, sizeof v));
    return buf;
}

static void print_table(FILE *out, const struct analysis *a, const struct trend *t,
                        const struct analysis_options *o, enum trend_kind kind, bool utf8)
{
    const char *arrow = utf8 ? "→" : "->";
    fprintf(out, "\n%14s %5s %7s  %25s  %-*s  %s\n", "rate", "mono", "share",
            "first -> last", SPARK_WIDTH, "trend",
            kind == TREND_CALL_SITE ? "call site (innermost first)"
            : o->cum ? "function (cumulative)" : "function");
    size_t shown = 0, limit = o->limit > 0 ? (size_t)o->limit : SIZE_MAX;
    bool steady_seen = false, said_unsteady = false;
    for (size_t i = 0; i < t->nrows && shown < limit; i++) {
        const struct trend_row *r = &t->rows[i];
        if (r->kind != kind)
            continue;
        if (r->steady)
            steady_seen = true;
        else if (steady_seen && !said_unsteady) {
            fprintf(out, "%14s (below: not steady enough to tell from noise)\n", "");
            said_unsteady = true;
        }
        char rate[48], share[16], first[32], last[32], fl[80], spark[SPARK_WIDTH * 4 + 1],
             name[TEXT_ESCAPE_BUF * 2];
        if (isnan(r->share))
            snprintf(share, sizeof share, "-");
        else
            snprintf(share, sizeof share, "%.1f%%", r->share * 100);
        snprintf(fl, sizeof fl, "%s %s %s",
                 analysis_format(o, r->values[0], false, first, sizeof first), arrow,
                 analysis_format(o, r->values[t->npoints - 1], false, last, sizeof last));
        /* the arrow is 3 bytes but 1 column in UTF-8: pad by columns */
        fprintf(out, "%14s %4.0f%% %7s  %*s  %s  %s\n", rate_text(o, r->rate, rate, sizeof rate),
                r->monotonic * 100, share, utf8 ? 27 : 25, fl,
                sparkline(r->values, t->npoints, utf8, spark, sizeof spark),
                row_name(a, r, name, sizeof name));
        shown++;
    }
    if (shown == 0)
        fprintf(out, "%14s (nothing held memory in these dumps)\n", "");
}

/* ---- one trend ---- */

/* What a trend is shown of: the dumps (indices into s->dumps) and when
 * each was taken (seconds; any origin). */
struct trend_input {
    const char *series;          /* NULL: the session's dumps, no series */
    const size_t *idx;
    size_t n;
    const double *times;
};

static void print_header(FILE *out, struct session *s, const struct trend_input *in,
                         const struct trend *t, const struct analysis_options *o, bool utf8)
{
    char a[32], b[32], r[48], spark[SPARK_WIDTH * 4 + 1], nb[TEXT_ESCAPE_BUF];
    double span = t->seconds[t->npoints - 1];
    if (in->series)
        fprintf(out, "Trend of series %s: ", text_escape(in->series, nb, sizeof nb));
    else
        fprintf(out, "Trend of the session's dumps: ");
    fprintf(out, "%zu dumps over %.0f s (%s", t->npoints, span,
            text_escape(s->dumps[in->idx[0]].name, nb, sizeof nb));
    fprintf(out, " .. %s)\n", text_escape(s->dumps[in->idx[in->n - 1]].name, nb, sizeof nb));
    fprintf(out, "Total %s: %s %s %s, %s  %s\n", o->objects ? "objects in use" : "in use",
            analysis_format(o, t->total[0], false, a, sizeof a), utf8 ? "→" : "->",
            analysis_format(o, t->total[t->npoints - 1], false, b, sizeof b),
            rate_text(o, t->total_rate, r, sizeof r),
            sparkline(t->total, t->npoints, utf8, spark, sizeof spark));
}

static json_object *json_rows(const struct analysis *a, const struct trend *t,
                              enum trend_kind kind, int limit)
{
    json_object *arr = json_object_new_array();
    size_t shown = 0, max = limit > 0 ? (size_t)limit : SIZE_MAX;
    for (size_t i = 0; i < t->nrows && shown < max; i++) {
        if (t->rows[i].kind != kind)
            continue;
        json_object_array_add(arr, analysis_trend_row_json(a, t, &t->rows[i]));
        shown++;
    }
    return arr;
}

static json_object *json_trend(struct session *s, const struct trend_input *in,
                               const struct analysis *a, const struct trend *t,
                               const struct analysis_options *o)
{
    json_object *j = json_answer_new();
    json_object_object_add(j, "series", in->series ? json_object_new_string(in->series) : NULL);
    json_object_object_add(j, "index", json_object_new_string(o->objects ? "objects" : "space"));
    json_object_object_add(j, "cum", json_object_new_boolean(o->cum));
    json_object_object_add(j, "points", json_object_new_uint64(t->npoints));
    json_object_object_add(j, "span_seconds",
                           json_object_new_double(t->seconds[t->npoints - 1]));
    json_object *dumps = json_object_new_array(), *secs = json_object_new_array(),
                *total = json_object_new_array();
    for (size_t i = 0; i < t->npoints; i++) {
        json_object_array_add(dumps, json_object_new_string(s->dumps[in->idx[i]].name));
        json_object_array_add(secs, json_object_new_double(t->seconds[i]));
        json_object_array_add(total, json_object_new_int64(llround(t->total[i])));
    }
    json_object_object_add(j, "dumps", dumps);
    json_object_object_add(j, "seconds", secs);
    json_object_object_add(j, "total", total);
    json_object_object_add(j, "total_rate_per_hour", json_object_new_double(t->total_rate));
    json_object_object_add(j, "functions", json_rows(a, t, TREND_FUNCTION, o->limit));
    json_object_object_add(j, "call_sites", json_rows(a, t, TREND_CALL_SITE, o->limit));
    return j;
}

/* --fail-over: 0, or -1 (exit status MEMPROF_EXIT_GROWTH) after naming
 * what grows faster than limit; j (when not NULL) gets "fail_over". */
static int check_fail_over(struct session *s, const struct analysis *a, const struct trend *t,
                           const struct analysis_options *o, double limit, json_object *j)
{
    char names[900] = "", lim[48];
    size_t used = 0, over = 0;
    json_object *exceeded = json_object_new_array();
    for (size_t i = 0; i < t->nrows; i++) {
        const struct trend_row *r = &t->rows[i];
        if (!(r->monotonic >= FAIL_OVER_MONOTONIC && r->rate > limit))
            continue;
        char nb[TEXT_ESCAPE_BUF * 2], rate[48];
        const char *name = row_name(a, r, nb, sizeof nb);
        json_object_array_add(exceeded, analysis_trend_row_json(a, t, r));
        if (over++ < 5 && used + 1 < sizeof names) {
            int w = snprintf(names + used, sizeof names - used, "%s%s%s (%s, %.0f%% mono)",
                             used ? "; " : "", r->kind == TREND_CALL_SITE ? "call site " : "",
                             name, rate_text(o, r->rate, rate, sizeof rate), r->monotonic * 100);
            if (w > 0)
                used += (size_t)w < sizeof names - used ? (size_t)w : sizeof names - used - 1;
        }
    }
    if (j) {
        json_object *f = json_object_new_object();
        json_object_object_add(f, "rate_per_hour", json_object_new_double(limit));
        json_object_object_add(f, "exceeded", exceeded);
        json_object_object_add(j, "fail_over", f);
    } else {
        json_object_put(exceeded);
    }
    if (over == 0)
        return 0;
    char v[32];
    snprintf(lim, sizeof lim, "%s/h", analysis_format(o, limit, false, v, sizeof v));
    /* The names were escaped as they were written: print them as they are. */
    fflush(s->out);
    fprintf(stderr, "memprof: trend: %zu row%s grow%s faster than --fail-over %s: %s%s\n",
            over, over == 1 ? "" : "s", over == 1 ? "s" : "", lim, names,
            over > 5 ? "; ..." : "");
    s->exit_status = MEMPROF_EXIT_GROWTH;
    return -1;
}

/* The trend of the dumps idx[0..n) taken at times, in ctx: one dump at a
 * time (parsed again from its file when not in memory, its view
 * forgotten once summed), so that memory does not grow with the number
 * of dumps.  0, or -1 after saying why (cmd: for the messages). */
int cmd_trend_compute(struct session *s, struct analysis *ctx, const size_t *idx, size_t n,
                      const double *times, const struct analysis_options *o, const char *cmd,
                      struct trend *t)
{
    struct mp_error err = {.msg = ""};
    struct trend_builder *b;
    if (analysis_trend_begin(ctx, times, n, o, &b, &err) < 0) {
        say_error("%s: %s", cmd, err.msg);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        struct session_dump *d = &s->dumps[idx[i]];
        const struct profile *p = session_dump_profile(s, d);
        if (!p) {                          /* said which dump and file */
            analysis_trend_abandon(b);
            return -1;
        }
        session_check_inputs(s, d);
        const struct analysis_view *v = analysis_view(ctx, p, &err);
        int rc = v ? analysis_trend_add(b, v, &err) : -1;
        analysis_forget(ctx, p);
        session_profiles_trim(s);
        if (rc < 0) {
            analysis_trend_abandon(b);
            say_error("%s: %s", cmd, err.msg);
            return -1;
        }
    }
    if (analysis_trend_end(b, t, &err) < 0) {
        say_error("%s: %s", cmd, err.msg);
        return -1;
    }
    return 0;
}

/* Compute and show the trend of in (views built in ctx), to out. */
static int show_trend(struct session *s, struct analysis *ctx, const struct trend_input *in,
                      const struct cmd_analysis_args *a, const double *fail_over, FILE *out)
{
    struct trend t;
    int rc;
    if (cmd_trend_compute(s, ctx, in->idx, in->n, in->times, &a->o, "trend", &t) < 0)
        return -1;
    bool utf8 = utf8_locale();
    if (a->json) {
        json_object *j = json_trend(s, in, ctx, &t, &a->o);
        rc = fail_over ? check_fail_over(s, ctx, &t, &a->o, *fail_over, j) : 0;
        FILE *saved = s->out;
        s->out = out;
        if (json_answer_emit(s, j) < 0)
            rc = -1;
        s->out = saved;
    } else {
        print_header(out, s, in, &t, &a->o, utf8);
        print_table(out, ctx, &t, &a->o, TREND_FUNCTION, utf8);
        print_table(out, ctx, &t, &a->o, TREND_CALL_SITE, utf8);
        rc = fail_over ? check_fail_over(s, ctx, &t, &a->o, *fail_over, NULL) : 0;
    }
    analysis_trend_free(&t);
    return rc;
}

/* A context for the dumps of in: at a's granularity, --show-alloc.  It
 * keeps no view (the first dump's, built to check it, is forgotten), so
 * the session's profiles may be trimmed while it lives. */
static struct analysis *trend_context(struct session *s, const struct cmd_analysis_args *a,
                                      struct session_dump *first)
{
    struct cmd_analysis_views w;
    if (cmd_analysis_open(s, "trend", a, first, NULL, &w) < 0)
        return NULL;
    analysis_forget(w.ctx, w.v->profile);
    return w.ctx;
}

static int parse_fail_over(const struct cmd_analysis_args *a, double *limit)
{
    struct mp_error err = {.msg = ""};
    if (!a->fail_over)
        return 0;
    if (analysis_parse_rate(a->fail_over, limit, &err) < 0) {
        say_error("trend: --fail-over %s", err.msg);
        return -1;
    }
    return 0;
}

/* ---- the live views ---- */

struct watch {
    struct session *s;
    const struct cmd_analysis_args *a;
    const char *cmd;               /* "top" or "trend" */
    double every;                  /* seconds between dumps */
    unsigned long count;           /* refreshes; 0: until Ctrl-C */
    bool live;                     /* redrawn in place on a terminal */
    FILE *out;
    FILE *frame;                   /* one refresh is drawn here, then put on
                                    * out at once (see watch_frame_end) */
    char series[16];               /* watchN */
    struct analysis *ctx;
    double *times;                 /* trend: each dump's time (CLOCK_REALTIME) */
    size_t ntimes, times_cap;
    size_t first;                  /* top: the view's first dump, in s->dumps */
    bool left;                     /* Ctrl-C: left the view */
};

static int parse_watch(struct watch *w)
{
    const struct cmd_analysis_args *a = w->a;
    char *end;
    if (!a->watch) {
        say_error("%s: --count goes with --watch S (a live view)", w->cmd);
        return -1;
    }
    w->every = strtod(a->watch, &end);
    if (*end || end == a->watch || !(w->every >= 0.1 && w->every <= 3600)) {
        say_error("%s: --watch %s: give the seconds between refreshes, from 0.1 to "
                      "3600", w->cmd, a->watch);
        return -1;
    }
    if (a->count) {
        errno = 0;
        unsigned long n = strtoul(a->count, &end, 10);
        if (*end || end == a->count || a->count[0] == '-' || errno || n < 1 || n > 1000000) {
            say_error("%s: --count %s: give how many refreshes, from 1 to 1000000",
                          w->cmd, a->count);
            return -1;
        }
        w->count = n;
    }
    if (!w->s->target) {
        say_error("%s --watch takes fresh dumps, so it needs a process: attach to one "
                      "first (memprof -p PID, or 'attach PID'); offline, 'trend' shows "
                      "how the loaded dumps grew", w->cmd);
        return -1;
    }
    w->live = isatty(STDOUT_FILENO);
    /* On a terminal, straight to it: not collected for the pager. */
    w->out = w->live ? stdout : w->s->out;
    for (unsigned n = 1; n < 100000; n++) {
        size_t *idx;
        snprintf(w->series, sizeof w->series, "watch%u", n);
        long have = session_series(w->s, w->series, &idx);
        free(idx);
        if (have == 0)
            return 0;
    }
    say_error("%s --watch: no free series name", w->cmd);
    return -1;
}

/* Whether the view should end now: Ctrl-C at the prompt (taken as
 * handled: leaving is what it asks for), or a signal ending the session. */
static bool watch_interrupted(struct watch *w)
{
    if (interrupt_take())
        w->left = true;
    return w->left || interrupt_stop_signal;
}

/* Sleep until the interval from start (CLOCK_MONOTONIC, when the refresh
 * began: a dump every S seconds, however long each takes), waking for
 * Ctrl-C and stop signals. */
static void watch_sleep(struct watch *w, struct timespec end)
{
    struct timespec now;
    end.tv_sec += (time_t)w->every;
    end.tv_nsec += (long)((w->every - floor(w->every)) * 1e9);
    if (end.tv_nsec >= 1000000000L) {
        end.tv_sec++;
        end.tv_nsec -= 1000000000L;
    }
    while (!watch_interrupted(w)) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        double left = (double)(end.tv_sec - now.tv_sec) + (end.tv_nsec - now.tv_nsec) / 1e9;
        if (left <= 0)
            return;
        double step = left < 0.2 ? left : 0.2;   /* bounded, whatever signals do */
        struct timespec ts = {0, (long)(step * 1e9)};
        nanosleep(&ts, NULL);
    }
}

/* One fresh dump into the view's series; a Ctrl-C meanwhile waits. */
static struct session_dump *watch_dump(struct watch *w)
{
    interrupt_hold();
    struct session_dump *d = sampling_applies(w->s) ? sampling_dump(w->s, NULL, NULL)
                                                    : control_dump_take(w->s, NULL, NULL);
    interrupt_release();
    if (d)
        session_series_add(w->s, d, w->series);
    return d;
}

static void watch_heading(struct watch *w, unsigned long refresh, const struct session_dump *d)
{
    time_t now = time(NULL);
    struct tm tm;
    char when[32], count[32] = "";
    gmtime_r(&now, &tm);
    strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", &tm);
    if (w->count)
        snprintf(count, sizeof count, " of %lu", w->count);
    if (w->live) {
        fputs("\033[H\033[2J", w->frame);    /* home and clear, as top(1) */
        fprintf(w->frame, "%s --watch %g: pid %d, %s, refresh %lu%s (%s, series %s); "
                "Ctrl-C leaves\n", w->cmd, w->every, (int)target_pid(w->s->target), when,
                refresh, count, d->name, w->series);
    } else {
        fprintf(w->frame, "=== %s %s --watch %g: refresh %lu%s (%s, series %s) ===\n", when,
                w->cmd, w->every, refresh, count, d->name, w->series);
    }
}

/* top: the growth since the view's first dump (its plain top at first). */
static int watch_show_top(struct watch *w, size_t latest)
{
    struct session *s = w->s;
    struct session_dump *d = &s->dumps[latest], *base = &s->dumps[w->first];
    struct mp_error err = {.msg = ""};
    /* Both stay parsed: the view never trims (it keeps only these two). */
    const struct profile *p = session_dump_profile(s, d);
    const struct profile *bp = latest != w->first ? session_dump_profile(s, base) : NULL;
    if (!p || (latest != w->first && !bp))
        return -1;                 /* said which dump and file */
    const struct analysis_view *v = analysis_view(w->ctx, p, &err);
    const struct analysis_view *bv = v && bp ? analysis_view(w->ctx, bp, &err) : NULL;
    if (!v || (latest != w->first && !bv)) {
        say_error("top --watch: %s", err.msg);
        return -1;
    }
    struct analysis_source src = {d->name, bv ? base->name : NULL};
    int rc = bv ? analysis_top_since(w->ctx, v, bv, &w->a->o, &src, w->frame, &err)
                : analysis_top(w->ctx, v, NULL, &w->a->o, &src, false, w->frame, &err);
    if (rc < 0) {
        say_error("top --watch: %s", err.msg);
        return -1;
    }
    if (!bv)
        fprintf(w->frame, "(the growth since this dump shows from the next refresh)\n");
    return 0;
}

static int watch_show_trend(struct watch *w, const double *fail_over)
{
    size_t *idx;
    long n = session_series(w->s, w->series, &idx);
    if (n < 0) {
        say_error("trend --watch: out of memory");
        return -1;
    }
    int rc = 0;
    if (n < 2) {
        fprintf(w->frame, "(a trend needs a second dump: the next comes in %g s)\n", w->every);
    } else {
        struct trend_input in = {w->series, idx, (size_t)n, w->times};
        rc = show_trend(w->s, w->ctx, &in, w->a, fail_over, w->frame);
    }
    free(idx);
    return rc;
}

/* top keeps the view's first dump (the base) and its latest: the ones
 * between are dropped with their views. */
static void watch_drop_previous(struct watch *w, size_t latest)
{
    size_t prev = latest - 1;
    if (prev == w->first || latest == 0 ||
        strcmp(w->s->dumps[prev].series, w->series) != 0)
        return;
    if (w->s->dumps[prev].parsed)
        analysis_forget(w->ctx, w->s->dumps[prev].parsed);
    session_remove_dump(w->s, prev);
}

/* Put the frame drawn on the terminal in one go, with Ctrl-C held: a
 * write that a Ctrl-C interrupts would cut the frame and leave stdout in
 * error (memprof's exit then says the output could not be written). */
static void watch_frame_end(struct watch *w, char **frame, size_t *len)
{
    if (w->frame != w->out) {
        fclose(w->frame);          /* sets *frame and *len */
        interrupt_hold();
        fwrite(*frame, 1, *len, w->out);
        fflush(w->out);
        interrupt_release();
        free(*frame);
    }
    fflush(w->out);
    w->frame = w->out;
}

static int watch_run(struct watch *w, const double *fail_over)
{
    struct session *s = w->s;
    int rc = 0;
    for (unsigned long refresh = 1; !w->count || refresh <= w->count; refresh++) {
        struct timespec now, started;
        clock_gettime(CLOCK_MONOTONIC, &started);
        clock_gettime(CLOCK_REALTIME, &now);
        struct session_dump *d = watch_dump(w);
        if (!d)
            return -1;
        size_t latest = (size_t)(d - s->dumps);
        if (refresh == 1) {
            w->first = latest;
            w->ctx = trend_context(s, w->a, d);
            if (!w->ctx)
                return -1;
            say_status(s, "%s --watch: dumps go to series %s%s\n", w->cmd, w->series,
                           w->live ? "" : "; Ctrl-C leaves");
        }
        if (array_reserve(&w->times, &w->times_cap, w->ntimes + 1, sizeof *w->times, 64) < 0) {
            say_error("%s --watch: out of memory", w->cmd);
            return -1;
        }
        w->times[w->ntimes++] = (double)now.tv_sec + now.tv_nsec / 1e9;
        char *frame = NULL;
        size_t frame_len = 0;
        w->frame = open_memstream(&frame, &frame_len);
        if (!w->frame)
            w->frame = w->out;     /* no memory for it: drawn directly */
        watch_heading(w, refresh, d);
        bool last = w->count && refresh == w->count;
        rc = strcmp(w->cmd, "top") == 0 ? watch_show_top(w, latest)
                                        : watch_show_trend(w, last ? fail_over : NULL);
        watch_frame_end(w, &frame, &frame_len);
        if (strcmp(w->cmd, "top") == 0)
            watch_drop_previous(w, latest);
        if (rc < 0 || last)
            break;
        watch_sleep(w, started);
        if (watch_interrupted(w))
            break;
    }
    if (rc < 0 && watch_interrupted(w))   /* Ctrl-C in the middle of a report */
        rc = 0;
    if (w->left)
        fprintf(w->out, "\n");
    return rc;
}

static int watch(struct session *s, const struct cmd_analysis_args *a, const char *cmd,
                 const double *fail_over)
{
    struct watch w = {.s = s, .a = a, .cmd = cmd};
    if (parse_watch(&w) < 0)
        return -1;
    int rc = watch_run(&w, fail_over);
    if (w.left)
        say_status(s, "left the live view; its dumps are in series %s\n", w.series);
    analysis_free(w.ctx);
    free(w.times);
    return rc;
}

int cmd_watch_top(struct session *s, const struct cmd_analysis_args *a, const char *dump)
{
    if (dump || a->base || a->json) {
        say_error("top --watch shows fresh dumps against the view's first one: "
                      "leave out %s", dump ? "the dump name" : a->base ? "--base" : "--json");
        return -1;
    }
    return watch(s, a, "top", NULL);
}

/* ---- trend ---- */

/* Every dump's time as taken_at, or -1 after naming one without. */
static double *dump_times(struct session *s, const size_t *idx, size_t n)
{
    double *times = malloc(n * sizeof *times);
    if (!times) {
        say_error("trend: out of memory");
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        const struct session_dump *d = &s->dumps[idx[i]];
        if (d->info.taken_at == 0) {
            say_error("trend: %s has no time it was taken (not a dump memprof took "
                          "nor a file with a modification time): leave it out of the "
                          "series", d->name);
            free(times);
            return NULL;
        }
        times[i] = (double)d->info.taken_at;
    }
    return times;
}

int cmd_trend(struct session *s, int argc, char **argv)
{
    struct cmd_analysis_args a;
    const char *series;
    if (cmd_analysis_parse(argc, argv, CMD_ALLOW_WATCH | CMD_ALLOW_FAIL_OVER, &a) < 0 ||
        cmd_analysis_count_and_name(&a, argv[0], cmd_trend_usage, &series, 10) < 0)
        return -1;
    double limit = 0;
    if (parse_fail_over(&a, &limit) < 0)
        return -1;
    const double *fail_over = a.fail_over ? &limit : NULL;
    if (a.watch || a.count) {
        if (series) {
            say_error("trend --watch makes its own series of fresh dumps: leave out "
                          "'%s'", series);
            return -1;
        }
        return watch(s, &a, "trend", fail_over);
    }
    size_t *idx;
    long n = session_series_regular(s, series, &idx);
    if (n < 0) {
        say_error("trend: out of memory");
        return -1;
    }
    if (n == 0) {
        if (series)
            say_error("trend: no series named '%s' in this session (a series is the "
                          "dumps of a profiling run or a live view); without a name, "
                          "trend takes the latest series, or every dump when none is in one",
                          series);
        else
            say_error("trend: no heap profile in this session yet: take dumps some "
                          "time apart with 'dump', or load files (memprof A.heap B.heap ...)");
        free(idx);
        return -1;
    }
    if (n < 2) {
        say_error("trend: %s has only one dump (%s); a trend needs at least 2 taken "
                      "some time apart: take more with 'dump'", series ? series : "the session",
                      s->dumps[idx[0]].name);
        free(idx);
        return -1;
    }
    double *times = dump_times(s, idx, (size_t)n);
    struct analysis *ctx = times ? trend_context(s, &a, &s->dumps[idx[0]]) : NULL;
    int rc = -1;
    if (ctx) {
        struct trend_input in = {series, idx, (size_t)n, times};
        if (!series && s->dumps[idx[0]].series[0])
            in.series = s->dumps[idx[0]].series;
        rc = show_trend(s, ctx, &in, &a, fail_over, s->out);
    }
    analysis_free(ctx);
    free(times);
    free(idx);
    return rc;
}
