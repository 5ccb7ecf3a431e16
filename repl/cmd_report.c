/* cmd_report.c - `report FILE.html [SERIES]`: the session's side of the
 * HTML report (lib/report/html.c draws it): choosing the series' dumps and
 * putting them in time order, their views in one context, the call graph
 * drawn by Graphviz's dot (cmd_pictures.c), what is known of the process,
 * and writing the file safely.
 *
 * The file is the user's path, but memprof runs as root: an existing name
 * that is not a regular file (a symbolic link, a directory, a FIFO) is
 * refused, and the page is written to a new file in the same directory and
 * renamed over the name only when whole, so a failure leaves nothing half
 * written and an existing report is replaced at once. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "attach/target.h"
#include "lib/analysis/analysis.h"
#include "lib/analysis/trend.h"
#include "lib/report/graphviz.h"
#include "lib/base/file_write.h"
#include "lib/report/html.h"
#include "repl/cmd_analysis.h"
#include "repl/command_table.h"
#include "session/control.h"
#include "session/say.h"

const char cmd_report_usage[] = "report FILE.html [SERIES] [options]";
const char cmd_report_summary[] = "one HTML page: summary, chart, tables, flame and call graphs";
const char cmd_report_help[] =
    "Writes one self-contained HTML file (styles, pictures and script inline;\n"
    "nothing is fetched, it opens from disk and offline) about a series of\n"
    "dumps: the process and the run (pid, executable, dumps, first and last\n"
    "time, in use first -> last and the total's growth per hour); a chart of\n"
    "the memory in use over time, the total and the five fastest steadily\n"
    "growing functions; the growth table (as 'trend': rate per hour, how\n"
    "monotonic, steady, share of the growth, a sparkline per function); the\n"
    "top table of the latest dump (flat, flat%, cum, cum%); the growth flame\n"
    "graph from the first to the latest dump (click to zoom, Search); and the\n"
    "latest dump's call graph drawn by Graphviz's 'dot' (when dot is not\n"
    "installed, the page says so).  With one dump, or dumps taken within one\n"
    "second, the over-time parts are left out and the page says why.\n"
    "SERIES is a series' name (a profiling run's dumps); without one, the\n"
    "latest series, or every dump of the session when none is in a series\n"
    "(files given to 'memprof a.heap b.heap ...' count too).  Dumps are put\n"
    "in the order they were taken.  An existing FILE is replaced (never a\n"
    "directory, a symbolic link or another non-regular file).\n"
    "  --nodefraction F, --edgefraction F   prune the call graph (see 'graph')\n"
    "The options of 'top' apply (see 'help top'): --objects, --focus RE,\n"
    "--ignore RE, --hide RE, --thread ID, --functions, --lines, --files,\n"
    "--addresses, --bytes, --show-alloc, --cum.\n";

/* ---- the dumps ---- */

/* The series' dumps (indices into s->dumps) in the order they were taken:
 * a stable sort by time, as files named on the command line come in the
 * order of their names.  Unknown times (0) leave the order alone. */
static void sort_by_time(struct session *s, size_t *idx, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s->dumps[idx[i]].info.taken_at == 0)
            return;
    for (size_t i = 1; i < n; i++) {
        size_t x = idx[i], j = i;
        int64_t t = s->dumps[x].info.taken_at;
        for (; j > 0 && s->dumps[idx[j - 1]].info.taken_at > t; j--)
            idx[j] = idx[j - 1];
        idx[j] = x;
    }
}

static long pick_series(struct session *s, const char *name, size_t **idx)
{
    long n = session_series_regular(s, name, idx);
    if (n < 0)
        say_error("report: out of memory");
    else if (n == 0 && !name)
        say_error("report: no heap profile in this session yet: take some with "
                      "'dump' (when attached) or give dump files: memprof a.heap b.heap "
                      "-e 'report out.html'");
    else if (n == 0)
        say_error("report: no series named '%s' in this session; 'dumps' lists the "
                      "dumps and the series they belong to", name);
    return n > 0 ? n : -1;
}

/* The name shared by every dump, or NULL when they are no one series. */
static const char *series_name(struct session *s, const size_t *idx, size_t n)
{
    const char *name = s->dumps[idx[0]].series;
    for (size_t i = 1; i < n; i++)
        if (strcmp(s->dumps[idx[i]].series, name) != 0)
            return NULL;
    return name[0] ? name : NULL;
}

/* ---- the call graph ---- */

/* dot's SVG of the latest dump's call graph in in->graph_svg, or the reason
 * there is none in in->graph_note (note: its storage).  -1 only when
 * memory ran out. */
static int draw_graph(struct analysis *ctx, const struct report_html_dump *d,
                      const struct analysis_options *o, struct report_html_input *in,
                      char *note, size_t note_len)
{
    struct analysis_source src = {d->name, NULL};
    struct mp_error err = {.msg = ""};
    char *dot = NULL;
    size_t dot_len = 0;
    FILE *mem = open_memstream(&dot, &dot_len);
    int rc = mem ? analysis_graph(ctx, d->view, o, &src, mem, &err) : -1;
    if (mem && fclose(mem) != 0)
        rc = -1;
    if (rc < 0) {
        free(dot);
        say_error("report: %s", mem ? err.msg : "out of memory");
        return -1;
    }
    char *svg = NULL;
    size_t svg_len = 0;
    if (graphviz_svg("graph", dot, dot_len, &svg, &svg_len, &err) == 0) {
        in->graph_svg = svg;
        in->graph_svg_len = svg_len;
    } else {
        snprintf(note, note_len, "%s", err.msg);
        in->graph_note = note;
        fprintf(stderr, "memprof: warning: report: the page has no call graph: %s\n", err.msg);
    }
    free(dot);
    return 0;
}

/* ---- writing the file ---- */

/* Refuse what must not be replaced before any work is done. */
static int check_destination(const char *path)
{
    struct stat st;
    if (!*path) {
        say_error("report: give the file to write, e.g. report memory.html");
        return -1;
    }
    if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        say_error("report: %s is a directory: give the name of a file in it, e.g. "
                      "%s/report.html", path, path);
        return -1;
    }
    if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        say_error("report: %s exists and is not a regular file (a symbolic link, FIFO "
                      "or device): memprof does not replace it; give another name", path);
        return -1;
    }
    return 0;
}

/* text to a new file beside path, then renamed over it. */
static int write_replacing(const char *path, const char *text, size_t len)
{
    char *copy = strdup(path), *copy2 = strdup(path), *tmp = NULL;
    const char *dir = copy ? dirname(copy) : NULL, *base = copy2 ? basename(copy2) : NULL;
    int rc = -1, fd = -1;
    if (!dir || !base || asprintf(&tmp, "%s/.%s.XXXXXX", dir, base) < 0) {
        tmp = NULL;
        say_error("report: out of memory");
        goto out;
    }
    fd = mkstemp(tmp);
    if (fd < 0) {
        say_error("report: cannot create a file in %s: %s; choose a directory you can "
                      "write to", dir, strerror(errno));
        goto out;
    }
    /* mkstemp makes it 0600; a report is for reading as any file the user
     * makes would be. */
    mode_t mask = umask(0);
    umask(mask);
    if (fchmod(fd, 0666 & ~mask) < 0)
        goto write_failed;
    if (file_write_all(fd, text, len))
        goto write_failed;
    if (close(fd) < 0) {
        fd = -1;
        goto write_failed;
    }
    fd = -1;
    if (rename(tmp, path) < 0) {
        say_error("report: cannot put the report at %s: %s", path, strerror(errno));
        unlink(tmp);
        goto out;
    }
    rc = 0;
    goto out;
write_failed:
    say_error("report: writing %s failed: %s", tmp, strerror(errno));
    if (fd >= 0)
        close(fd);
    unlink(tmp);
out:
    free(tmp);
    free(copy);
    free(copy2);
    return rc;
}

/* ---- the command ---- */

struct report_job {
    struct session *s;
    const struct cmd_analysis_args *a;
    size_t *idx;
    size_t n;
    struct report_html_dump *dumps;
    struct cmd_analysis_views w;   /* the context; w.v is the latest dump's view */
    struct trend trend;            /* over time, when has_trend */
    bool has_trend;
};

/* The dumps in one context (node ids shared): the trend over time one
 * dump at a time (cmd_trend_compute: a long series is never in memory at
 * once), then the views of the first and the last, which the page draws. */
static int open_views(struct report_job *j)
{
    struct session *s = j->s;
    struct session_dump *last = &s->dumps[j->idx[j->n - 1]];
    if (cmd_analysis_open(s, "report", j->a, last, NULL, &j->w) < 0)
        return -1;
    analysis_forget(j->w.ctx, j->w.v->profile);
    j->w.v = NULL;
    for (size_t i = 0; i < j->n; i++) {
        const struct session_dump *d = &s->dumps[j->idx[i]];
        j->dumps[i] = (struct report_html_dump){
            d->name, NULL, d->info.taken_at, d->info.total.inuse_bytes,
            d->info.total.inuse_objects, d->info.nstacks,
        };
    }
    struct report_html_input probe = {.dumps = j->dumps, .ndumps = j->n};
    if (report_html_over_time(&probe)) {
        double *times = malloc(j->n * sizeof *times);
        if (!times) {
            say_error("report: out of memory");
            return -1;
        }
        for (size_t i = 0; i < j->n; i++)
            times[i] = (double)j->dumps[i].taken_at;
        int rc = cmd_trend_compute(s, j->w.ctx, j->idx, j->n, times, &j->a->o, "report",
                                   &j->trend);
        free(times);
        if (rc < 0)
            return -1;
        j->has_trend = true;
    } else {
        for (size_t i = 0; i < j->n; i++) {
            struct session_dump *d = &s->dumps[j->idx[i]];
            if (!session_dump_profile(s, d))
                return -1;                 /* said which dump and file */
            session_check_inputs(s, d);
            session_profiles_trim(s);      /* the context holds no view yet */
        }
    }
    /* Both parsed now (kept: nothing trims until the command ends). */
    size_t ends[2] = {0, j->n - 1};
    for (size_t k = 0; k < 2; k++) {
        struct session_dump *d = &s->dumps[j->idx[ends[k]]];
        struct mp_error err = {.msg = ""};
        const struct profile *p = session_dump_profile(s, d);
        const struct analysis_view *v = p ? analysis_view(j->w.ctx, p, &err) : NULL;
        if (!v) {
            if (p)
                say_error("report: %s: %s", d->name, err.msg);
            return -1;
        }
        j->dumps[ends[k]].view = v;
    }
    j->w.v = j->dumps[j->n - 1].view;
    return 0;
}

static int make_report(struct report_job *j, char **text, size_t *len)
{
    struct session *s = j->s;
    char note[1100];
    struct report_html_input in = {
        .a = j->w.ctx, .o = &j->a->o, .dumps = j->dumps, .ndumps = j->n,
        .series = series_name(s, j->idx, j->n),
        .pid = s->target ? (long)target_pid(s->target) : 0,
        .exe = s->target ? target_exe(s->target) : s->exe,
        .generated_at = (int64_t)time(NULL),
        .trend = j->has_trend ? &j->trend : NULL,
    };
    if (draw_graph(j->w.ctx, &j->dumps[j->n - 1], &j->a->o, &in, note, sizeof note) < 0)
        return -1;
    struct mp_error err = {.msg = ""};
    FILE *mem = open_memstream(text, len);
    int rc = mem ? report_html(&in, mem, &err) : mp_error_set(&err, "out of memory");
    if (mem && fclose(mem) != 0 && rc == 0)
        rc = mp_error_set(&err, "out of memory");
    if (rc < 0)
        say_error("report: %s", err.msg);
    free((char *)in.graph_svg);
    return rc;
}

int cmd_report(struct session *s, int argc, char **argv)
{
    struct cmd_analysis_args a;
    if (cmd_analysis_parse(argc, argv, CMD_ALLOW_NODEFRACTION | CMD_ALLOW_EDGEFRACTION, &a) < 0)
        return -1;
    if (a.npos < 1 || a.npos > 2) {
        say_error("report: usage: %s", cmd_report_usage);
        return -1;
    }
    if (a.json || a.o.alloc) {
        say_error("report: %s does not apply: the report is a page about what is in use",
                      a.json ? "--json" : "--alloc");
        return -1;
    }
    const char *path = a.pos[0];
    if (check_destination(path) < 0)
        return -1;
    struct report_job j = {.s = s, .a = &a};
    long n = pick_series(s, a.npos == 2 ? a.pos[1] : NULL, &j.idx);
    if (n < 0)
        return -1;
    j.n = (size_t)n;
    sort_by_time(s, j.idx, j.n);
    j.dumps = calloc(j.n, sizeof *j.dumps);
    char *text = NULL;
    size_t len = 0;
    int rc = -1;
    if (!j.dumps)
        say_error("report: out of memory");
    else if (open_views(&j) == 0 && make_report(&j, &text, &len) == 0)
        rc = write_replacing(path, text, len);
    if (rc == 0) {
        char size[32];
        fprintf(s->out, "report of %zu dump%s written to %s (%s)\n", j.n, j.n == 1 ? "" : "s",
                path, analysis_format_bytes((double)len, false, false, size, sizeof size));
    }
    free(text);
    if (j.has_trend)
        analysis_trend_free(&j.trend);
    free(j.dumps);
    free(j.idx);
    analysis_free(j.w.ctx);
    return rc;
}
