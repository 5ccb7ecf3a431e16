/* cmd_faults.c - the faults command: the attached process's page faults
 * sampled for SECONDS by the kernel (session/faults.c), added as a dump,
 * and where they were (which mappings) said. */
#include "repl/command_table.h"

#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/analysis/analysis.h"
#include "lib/base/text_escape.h"
#include "repl/interrupt.h"
#include "repl/options.h"
#include "session/faults.h"
#include "session/json_answer.h"
#include "session/say.h"


static bool stop_now(void)
{
    return interrupt_sigint || interrupt_stop_signal;
}

static double share(uint64_t part, uint64_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 0;
}

static void print_notes(struct session *s, const struct faults_report *r)
{
    const struct perf_faults_counts *c = &r->counts;
    if (c->kernel_excluded)
        say_status(s, "note: faults the kernel took on the process's behalf (read() "
                   "into new pages...) are not counted: that needs CAP_PERFMON or "
                   "kernel.perf_event_paranoid <= 1\n");
    if (c->lost)
        say_status(s, "note: the kernel dropped %" PRIu64 " samples (a ring buffer was "
                   "full): sample less often (--freq, --period)\n", c->lost);
    if (c->throttled)
        say_status(s, "note: the kernel throttled sampling %" PRIu64 " times "
                   "(kernel.perf_event_max_sample_rate)\n", c->throttled);
    if (r->dropped)
        say_status(s, "note: %" PRIu64 " samples beyond memprof's bounds (distinct "
                   "stacks) are not in the dump\n", r->dropped);
    if (r->truncated)
        say_status(s, "note: %.0f %% of the stacks end early (code without unwind "
                   "information, a stack deeper than the %u bytes copied)\n",
                   share(r->truncated, r->counts.samples), PERF_FAULTS_STACK_BYTES);
}

static void print_text(struct session *s, const struct faults_report *r)
{
    FILE *o = s->out;
    char bytes[32];
    analysis_format_bytes((double)(r->faults * r->page_bytes), false, false, bytes,
                          sizeof bytes);
    fprintf(o, "%s: %" PRIu64 " page faults over %.1f s (%" PRIu64 " samples, %u "
            "thread%s), %s of pages touched; ", r->dump->name, r->faults, r->seconds,
            r->counts.samples, r->counts.threads, r->counts.threads == 1 ? "" : "s", bytes);
    if (r->faults)
        fprintf(o, "'top %s' names the code\n", r->dump->name);
    else
        fputs("no page fault was sampled meanwhile: no code to name\n", o);
    for (unsigned i = 0; i < r->nmaps; i++) {
        fprintf(o, "  %5.1f %%  ", share(r->maps[i].faults, r->faults));
        text_escape_put(o, r->maps[i].what);
        fputc('\n', o);
    }
    if (r->other_faults)
        fprintf(o, "  %5.1f %%  other mappings\n", share(r->other_faults, r->faults));
    if (r->unmapped_faults)
        fprintf(o, "  %5.1f %%  unmapped since\n", share(r->unmapped_faults, r->faults));
    print_notes(s, r);
}

static int print_json(struct session *s, const struct faults_report *r)
{
    json_object *a = json_answer_new(), *maps = json_object_new_array();
    json_object_object_add(a, "dump", json_dump(r->dump));
    json_object_object_add(a, "seconds", json_object_new_double(r->seconds));
    json_object_object_add(a, "faults", json_object_new_int64((int64_t)r->faults));
    json_object_object_add(a, "bytes",
                           json_object_new_int64((int64_t)(r->faults * r->page_bytes)));
    json_object_object_add(a, "samples", json_object_new_int64((int64_t)r->counts.samples));
    json_object_object_add(a, "lost", json_object_new_int64((int64_t)r->counts.lost));
    json_object_object_add(a, "threads", json_object_new_int((int)r->counts.threads));
    json_object_object_add(a, "kernel_faults_counted",
                           json_object_new_boolean(!r->counts.kernel_excluded));
    json_object_object_add(a, "truncated_stacks", json_object_new_int64((int64_t)r->truncated));
    for (unsigned i = 0; i < r->nmaps; i++) {
        json_object *m = json_object_new_object();
        json_object_object_add(m, "mapping", json_object_new_string(r->maps[i].what));
        json_object_object_add(m, "faults", json_object_new_int64((int64_t)r->maps[i].faults));
        json_object_array_add(maps, m);
    }
    json_object_object_add(a, "mappings", maps);
    json_object_object_add(a, "other_faults", json_object_new_int64((int64_t)r->other_faults));
    json_object_object_add(a, "unmapped_faults",
                           json_object_new_int64((int64_t)r->unmapped_faults));
    return json_answer_emit(s, a);
}

static int number(const char *opt, const char *text, double lo, double hi, double *out)
{
    char *end;
    *out = strtod(text, &end);
    if (*end || end == text || !(*out >= lo && *out <= hi)) {
        say_error("%s %s: give a number from %g to %g", opt, text, lo, hi);
        return -1;
    }
    return 0;
}

/* faults SECONDS [--period N | --freq HZ] [--name NAME] [--json] */
int cmd_faults(struct session *s, int argc, char **argv)
{
    struct cmd_option opts[] = {
        {"period", true, false, NULL}, {"freq", true, false, NULL},
        {"name", true, false, NULL}, {"json", false, false, NULL},
        {NULL, false, false, NULL},
    };
    char *pos[1];
    int np = options_parse(argc, argv, opts, pos, 1);
    if (np < 0)
        return -1;
    if (np != 1) {
        say_error("faults: say for how long, in seconds (faults SECONDS)");
        return -1;
    }
    struct faults_options fo = {.period = FAULTS_PERIOD_DEFAULT, .name = opts[2].value, .stop = stop_now};
    double v;
    if (number("SECONDS", pos[0], 0.01, 3600, &fo.seconds))
        return -1;
    if (opts[0].given && opts[1].given) {
        say_error("faults: --period and --freq exclude each other");
        return -1;
    }
    if (opts[0].given) {
        if (number("--period", opts[0].value, 1, 1e9, &v))
            return -1;
        fo.period = (uint64_t)v;
    }
    if (opts[1].given) {
        if (number("--freq", opts[1].value, 1, 100000, &v))
            return -1;
        fo.freq = (unsigned)v;
        fo.period = 0;
    }
    struct faults_report r;
    if (faults_take(s, &fo, &r) < 0)
        return -1;
    if (opts[3].given)
        return print_json(s, &r);
    print_text(s, &r);
    return 0;
}
