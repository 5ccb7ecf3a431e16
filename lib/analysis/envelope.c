/* envelope.c - what every analysis report starts with: the total
 * line (text) or the envelope object (JSON), and JSON output itself. */
#include "lib/analysis/internal.h"
#include "lib/base/text_escape.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

static const char *const granularity_name[ANALYSIS_NGRANULARITIES] = {
    "functions", "lines", "files", "addresses",
};

bool analysis_filtered(const struct analysis_query *q)
{
    return q->have[QUERY_FOCUS] || q->have[QUERY_IGNORE];
}

const char *analysis_measured(const struct analysis_query *q)
{
    return q->page_faults ? "faulted in" : q->opt->alloc ? "allocated" : "in use";
}

const char *analysis_counted(const struct analysis_query *q)
{
    return q->page_faults ? "faults" : "objects";
}

void analysis_print_total(FILE *out, const struct analysis_query *q,
                          const struct analysis_source *src, const struct profile *p,
                          struct analysis_amount total, struct analysis_amount shown)
{
    const struct analysis_options *o = q->opt;
    char b[64], pct[32], nb[TEXT_ESCAPE_BUF];
    fprintf(out, "Total: %s %s, %.0f %s",
            analysis_format_bytes(total.bytes, o->exact, false, b, sizeof b),
            analysis_measured(q), total.objects, analysis_counted(q));
    if (o->has_thread)
        fprintf(out, " in thread %" PRIu64, o->thread);
    fprintf(out, " (%s, %zu stacks",
            src && src->name ? text_escape(src->name, nb, sizeof nb) : "profile", p->nstacks);
    if (p->truncated)
        fprintf(out, ", truncated");
    fprintf(out, ")\n");
    if (analysis_filtered(q))
        fprintf(out, "Shown: %s, %.0f %s (%s of the total) after --focus/--ignore\n",
                analysis_format_bytes(shown.bytes, o->exact, false, b, sizeof b),
                shown.objects, analysis_counted(q),
                analysis_percent(analysis_key(o, shown), analysis_key(o, total),
                                 pct, sizeof pct));
}

json_object *analysis_json_head(const struct analysis_query *q,
                                const struct analysis_source *src,
                                struct analysis_amount total)
{
    const struct analysis_options *o = q->opt;
    json_object *j = json_object_new_object();
    json_object_object_add(j, "schema", json_object_new_int(MEMPROF_JSON_SCHEMA));
    if (src && src->name)
        json_object_object_add(j, "dump", json_object_new_string(src->name));
    if (src && src->base_name)
        json_object_object_add(j, "base", json_object_new_string(src->base_name));
    json_object_object_add(j, "sample", json_object_new_string(q->page_faults ? "faults"
                                                               : o->alloc ? "alloc" : "inuse"));
    json_object_object_add(j, "index", json_object_new_string(o->objects ? "objects" : "space"));
    json_object_object_add(j, "granularity",
                           json_object_new_string(granularity_name[q->a->granularity]));
    if (o->has_thread)
        json_object_object_add(j, "thread", json_object_new_uint64(o->thread));
    analysis_json_amount(j, "total_", total);
    return j;
}

void analysis_json_node(json_object *o, const struct analysis_node *n, const char *key)
{
    json_object_object_add(o, key, json_object_new_string(n->name));
    if (n->name != n->function)
        json_object_object_add(o, "function_name", json_object_new_string(n->function));
    if (n->file)
        json_object_object_add(o, "file", json_object_new_string(n->file));
    if (n->line)
        json_object_object_add(o, "line", json_object_new_int(n->line));
}

void analysis_json_amount(json_object *o, const char *prefix, struct analysis_amount m)
{
    char key[64];
    snprintf(key, sizeof key, "%sbytes", prefix);
    json_object_object_add(o, key, json_object_new_int64(llround(m.bytes)));
    snprintf(key, sizeof key, "%sobjects", prefix);
    json_object_object_add(o, key, json_object_new_int64(llround(m.objects)));
}

int analysis_json_emit(json_object *o, FILE *out, struct mp_error *err)
{
    const char *s = json_object_to_json_string_ext(
        o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE);
    int rc = 0;
    if (!s || fprintf(out, "%s\n", s) < 0)
        rc = mp_error_set(err, "could not write the JSON output");
    json_object_put(o);
    return rc;
}
