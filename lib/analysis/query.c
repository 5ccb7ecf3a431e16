/* query.c - what a report reads from a view: the sample choice
 * (--inuse/--alloc, --thread), the stack filters (--focus, --ignore,
 * --hide) with each regex's verdict cached per node, and the formatting of
 * values and percentages shared by every report. */
#include "lib/analysis/analysis.h"
#include "lib/base/array.h"
#include "lib/analysis/internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const option_of[QUERY_NRE] = {
    "--focus", "--ignore", "--hide", "the pattern",
};

static int compile_one(struct analysis_query *q, int which, const char *re,
                       struct mp_error *err)
{
    if (!re)
        return 0;
    int rc = regcomp(&q->re[which], re, REG_EXTENDED | REG_NOSUB);
    if (rc != 0) {
        char why[256];
        regerror(rc, &q->re[which], why, sizeof why);
        regfree(&q->re[which]);
        return mp_error_set(err, "%s '%s' is not a valid regular expression (%s); "
                            "use POSIX extended syntax, e.g. 'leak_.*|parse'",
                            option_of[which], re, why);
    }
    q->have[which] = true;
    return 0;
}

static int check_alloc(const struct profile *p, struct mp_error *err)
{
    if (p->has_alloc)
        return 0;
    return mp_error_set(err, "%s has no cumulative (allocated-ever) counts, so "
                        "--alloc has nothing to show; start the process with "
                        "MALLOC_CONF=prof:true,prof_accum:true, or use --inuse",
                        p->name ? p->name : "this profile");
}

static int thread_index(const struct profile *p, uint64_t id)
{
    for (size_t i = 0; i < p->nthreads; i++)
        if (p->threads[i].id == id)
            return (int)i;
    return -1;
}

static int check_thread(const struct profile *p, uint64_t id, struct mp_error *err)
{
    if (thread_index(p, id) >= 0)
        return 0;
    if (p->nthreads == 0)
        return mp_error_set(err, "%s has no per-thread counts, so --thread cannot "
                            "select one (only jemalloc's heap_v2 format has them)",
                            p->name ? p->name : "this profile");
    char ids[256] = "";
    size_t used = 0;
    for (size_t i = 0; i < p->nthreads && used + 24 < sizeof ids; i++)
        used += snprintf(ids + used, sizeof ids - used, "%s%" PRIu64,
                         i ? ", " : "", p->threads[i].id);
    return mp_error_set(err, "no thread %" PRIu64 " in %s; its threads are: %s%s",
                        id, p->name ? p->name : "this profile", ids,
                        used + 24 >= sizeof ids ? ", ..." : "");
}

int analysis_query_init(struct analysis_query *q, struct analysis *a,
                        const struct analysis_options *opt,
                        const struct profile *const *profiles, size_t nprofiles,
                        struct mp_error *err)
{
    memset(q, 0, sizeof *q);
    q->a = a;
    q->opt = opt;
    q->page_faults = nprofiles > 0;
    for (size_t i = 0; i < nprofiles; i++) {
        q->page_faults = q->page_faults && profiles[i]->page_faults;
        if (opt->alloc && check_alloc(profiles[i], err) < 0)
            return -1;
        if (opt->has_thread && check_thread(profiles[i], opt->thread, err) < 0)
            return -1;
    }
    const char *res[QUERY_NRE] = {opt->focus, opt->ignore, opt->hide, opt->match};
    for (int w = 0; w < QUERY_NRE; w++) {
        if (compile_one(q, w, res[w], err) < 0) {
            analysis_query_fini(q);
            return -1;
        }
    }
    return 0;
}

void analysis_query_fini(struct analysis_query *q)
{
    for (int w = 0; w < QUERY_NRE; w++) {
        if (q->have[w])
            regfree(&q->re[w]);
        free(q->verdict[w]);
        q->have[w] = false;
        q->verdict[w] = NULL;
    }
    free(q->scratch);
    q->scratch = NULL;
}

static struct analysis_amount pick(const struct analysis_options *o,
                                   const struct profile_values *v)
{
    if (o->alloc)
        return (struct analysis_amount){v->alloc_bytes, v->alloc_objects};
    return (struct analysis_amount){v->inuse_bytes, v->inuse_objects};
}

struct analysis_amount analysis_stack_amount(const struct analysis_query *q,
                                             const struct profile *p, size_t i)
{
    const struct profile_stack *st = &p->stacks[i];
    if (!q->opt->has_thread)
        return pick(q->opt, &st->v);
    struct analysis_amount sum = {0, 0};
    for (uint32_t k = 0; k < st->nsamples; k++) {
        const struct profile_thread_sample *ts = &p->samples[st->sample0 + k];
        if (ts->thread < p->nthreads && p->threads[ts->thread].id == q->opt->thread) {
            struct analysis_amount m = pick(q->opt, &ts->v);
            sum.bytes += m.bytes;
            sum.objects += m.objects;
        }
    }
    return sum;
}

struct analysis_amount analysis_total(const struct analysis_query *q,
                                      const struct profile *p)
{
    /* Summed per stack (not the header line): the header is sampled
     * separately and with --thread only the stacks carry the split. */
    struct analysis_amount sum = {0, 0};
    for (size_t i = 0; i < p->nstacks; i++) {
        struct analysis_amount m = analysis_stack_amount(q, p, i);
        sum.bytes += m.bytes;
        sum.objects += m.objects;
    }
    return sum;
}

static int grow_verdicts(struct analysis_query *q)
{
    size_t n = q->a->nnodes;
    for (int w = 0; w < QUERY_NRE; w++) {
        if (!q->have[w])
            continue;
        uint8_t *v = realloc(q->verdict[w], n);
        if (!v)
            return -1;
        memset(v + q->nverdicts, 0, n - q->nverdicts);
        q->verdict[w] = v;
    }
    q->nverdicts = n;
    return 0;
}

static bool regex_hits(const regex_t *re, const char *s)
{
    return s && regexec(re, s, 0, NULL, 0) == 0;
}

bool analysis_node_matches(struct analysis_query *q, int which, uint32_t id)
{
    if (!q->have[which])
        return false;
    if (id >= q->nverdicts && grow_verdicts(q) < 0)
        return false;
    uint8_t *v = &q->verdict[which][id];
    if (*v == 0) {
        const struct analysis_node *n = &q->a->nodes[id];
        /* peek and list name functions (files at --files); the filters,
         * like jeprof's, take the name as shown, the function or its file. */
        bool hit = which == QUERY_MATCH
            ? regex_hits(&q->re[which], q->a->granularity == ANALYSIS_FILES ? n->name : n->function)
            : regex_hits(&q->re[which], n->name) ||
                   (n->function != n->name && regex_hits(&q->re[which], n->function)) ||
                   (n->file != n->name && regex_hits(&q->re[which], n->file));
        *v = hit ? 2 : 1;
    }
    return *v == 2;
}

static bool any_matches(struct analysis_query *q, int which,
                        const uint32_t *ids, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (analysis_node_matches(q, which, ids[k]))
            return true;
    return false;
}

static const uint32_t *without_hidden(struct analysis_query *q, const uint32_t *ids,
                                      size_t *n)
{
    if (array_reserve(&q->scratch, &q->scratch_cap, *n, sizeof *q->scratch, 256))
        return ids;   /* out of memory: show the frames rather than fail */
    size_t kept = 0;
    for (size_t k = 0; k < *n; k++)
        if (!analysis_node_matches(q, QUERY_HIDE, ids[k]))
            q->scratch[kept++] = ids[k];
    *n = kept;
    return q->scratch;
}

bool analysis_stack_nodes(struct analysis_query *q, const struct analysis_view *v,
                          size_t i, const uint32_t **ids, size_t *n)
{
    const uint32_t *s = v->node_ids + v->stack_start[i];
    size_t len = v->stack_start[i + 1] - v->stack_start[i];
    if (q->have[QUERY_FOCUS] && !any_matches(q, QUERY_FOCUS, s, len))
        return false;
    if (q->have[QUERY_IGNORE] && any_matches(q, QUERY_IGNORE, s, len))
        return false;
    if (q->have[QUERY_HIDE])
        s = without_hidden(q, s, &len);
    *ids = s;
    *n = len;
    return true;
}

int analysis_check_fraction(const char *option, double value, struct mp_error *err)
{
    if (value >= 0 && value <= 1)
        return 0;
    return mp_error_set(err, "%s %g is not a fraction: give a value from 0 to 1, "
                        "e.g. 0.01 to leave out what is under 1%% of the total", option,
                        value);
}

/* ---- formatting ---- */

char *analysis_format_bytes(double bytes, bool exact, bool plus, char *buf, size_t len)
{
    static const char *const unit[] = {"KiB", "MiB", "GiB", "TiB"};
    const char *sign = bytes < 0 ? "-" : plus && bytes > 0 ? "+" : "";
    double m = fabs(bytes);
    if (exact || m < 1024) {
        snprintf(buf, len, "%s%.0f%s", sign, m, exact ? "" : " B");
        return buf;
    }
    int u = 0;
    m /= 1024;
    while (m >= 1024 && u < 3) {
        m /= 1024;
        u++;
    }
    snprintf(buf, len, "%s%.1f %s", sign, m, unit[u]);
    return buf;
}

char *analysis_format(const struct analysis_options *o, double v, bool plus,
                      char *buf, size_t len)
{
    if (o->objects) {
        const char *sign = plus && v > 0 ? "+" : "";
        snprintf(buf, len, "%s%.0f", sign, v);
        return buf;
    }
    return analysis_format_bytes(v, o->exact, plus, buf, len);
}

char *analysis_percent(double v, double total, char *buf, size_t len)
{
    if (total == 0)
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%.1f%%", v * 100.0 / total);
    return buf;
}
