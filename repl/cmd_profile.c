/* cmd_profile.c - the `profile` command: start, state, stop, wait and save
 * of a profiling run (session/profile_run.c runs it). */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/analysis/analysis.h"
#include "lib/base/mono_clock.h"
#include "lib/base/text_escape.h"
#include "repl/command_table.h"
#include "session/control.h"
#include "session/say.h"
#include "repl/interrupt.h"
#include "session/json_answer.h"
#include "repl/options.h"
#include "session/profile_run.h"

enum {
    OPT_DURATION, OPT_EVERY, OPT_SAMPLE, OPT_PEAK, OPT_NAME, OPT_FORCE, OPT_SAVE, OPT_JSON,
    OPT_FAULTS,
    NOPTS
};

/* Which options each subcommand takes. */
static const struct {
    const char *sub;
    unsigned allowed;          /* bits of OPT_* */
    bool needs_target;
} subs[] = {
    {"start", (1u << OPT_DURATION) | (1u << OPT_EVERY) | (1u << OPT_SAMPLE) | (1u << OPT_PEAK) |
              (1u << OPT_NAME) | (1u << OPT_FORCE) | (1u << OPT_SAVE) | (1u << OPT_JSON) |
              (1u << OPT_FAULTS), true},
    {"state", 1u << OPT_JSON, false},
    {"stop", 1u << OPT_JSON, false},
    {"wait", 1u << OPT_JSON, false},
    {"save", 0, false},
};

static void wall_text(time_t t, char *buf, size_t len)
{
    struct tm tm;
    if (!t || !localtime_r(&t, &tm) || !strftime(buf, len, "%H:%M:%S", &tm))
        snprintf(buf, len, "-");
}

static const struct session_dump *latest_dump(struct session *s, const struct profile_run *r)
{
    return r->latest[0] ? session_find_dump(s, r->latest) : NULL;
}

static int state_json(struct session *s, const struct profile_run *r)
{
    json_object *j = json_answer_new(), *o = json_object_new_object();
    double end = r->state == RUN_RUNNING ? mono_clock_s() : r->t_stopped;
    json_object_object_add(o, "name", json_object_new_string(r->name));
    json_object_object_add(o, "state", json_object_new_string(profile_run_state_name(r->state)));
    json_object_object_add(o, "pid", json_object_new_int(r->pid));
    json_object_object_add(o, "started", json_object_new_int64(r->wall_start));
    json_object_object_add(o, "ended", r->wall_end ? json_object_new_int64(r->wall_end) : NULL);
    json_object_object_add(o, "elapsed", json_object_new_double(end - r->t_start));
    json_object_object_add(o, "duration", r->o.duration > 0 ? json_object_new_double(r->o.duration) : NULL);
    json_object_object_add(o, "remaining", r->state == RUN_RUNNING && r->o.duration > 0
                           ? json_object_new_double(r->t_end - end > 0 ? r->t_end - end : 0) : NULL);
    json_object_object_add(o, "every", json_object_new_double(r->o.every));
    json_object_object_add(o, "lg_sample", r->o.has_sample ? json_object_new_int(r->o.sample) : NULL);
    json_object_object_add(o, "peak", json_object_new_boolean(r->o.peak));
    json_object_object_add(o, "faults", json_object_new_boolean(r->o.faults));
    json_object_object_add(o, "dumps", json_object_new_int((int)r->ndumps));
    json_object_object_add(o, "peaks", json_object_new_int((int)r->npeaks));
    json_object_object_add(o, "why", r->why[0] ? json_object_new_string(r->why) : NULL);
    const struct session_dump *d = latest_dump(s, r);
    json_object_object_add(o, "latest", d ? json_dump(d) : NULL);
    json_object_object_add(j, "run", o);
    return json_answer_emit(s, j);
}

static int state_print(struct session *s, bool json)
{
    const struct profile_run *r = s->run;
    if (!r) {
        if (json) {
            json_object *j = json_answer_new();
            json_object_object_add(j, "run", NULL);
            return json_answer_emit(s, j);
        }
        fprintf(s->out, "no profiling run in this session: 'profile start' begins one\n");
        return 0;
    }
    if (json)
        return state_json(s, r);
    double end = r->state == RUN_RUNNING ? mono_clock_s() : r->t_stopped;
    char started[16], left[64] = "";
    wall_text(r->wall_start, started, sizeof started);
    if (r->state == RUN_RUNNING && r->o.duration > 0)
        snprintf(left, sizeof left, " of %.1f s (%.1f s left)", r->o.duration,
                 r->t_end - end > 0 ? r->t_end - end : 0);
    else if (r->state == RUN_RUNNING)
        snprintf(left, sizeof left, " (until 'profile stop')");
    fprintf(s->out, "%s: %s, process %d, started %s, %.1f s%s\n", r->name,
            profile_run_state_name(r->state), r->pid, started, end - r->t_start, left);
    char why[TEXT_ESCAPE_BUF];   /* may quote the process (its executable's name) */
    if (r->why[0] && r->state != RUN_RUNNING)
        fprintf(s->out, "  ended: %s\n", text_escape(r->why, why, sizeof why));
    char rate[48] = "";
    if (r->o.has_sample)
        snprintf(rate, sizeof rate, ", sampling every 2^%u bytes", r->o.sample);
    fprintf(s->out, "  %sdumps every %.1f s%s%s: %u taken%s", r->o.faults ? "page-fault " : "",
            r->o.every, rate,
            r->o.peak ? ", and at each new peak" : "", r->ndumps, r->o.peak ? "" : "\n");
    if (r->o.peak)
        fprintf(s->out, ", %u at peaks\n", r->npeaks);
    const struct session_dump *d = latest_dump(s, r);
    if (d) {
        char inuse[32];
        analysis_format_bytes(d->info.total.inuse_bytes, false, false, inuse, sizeof inuse);
        fprintf(s->out, "  latest: %s, %zu stacks, %s in use\n", d->name, d->info.nstacks,
                inuse);
    }
    return 0;
}

static int parse_start(struct cmd_option *opts, struct profile_run_options *o)
{
    struct mp_error err;
    memset(o, 0, sizeof *o);
    if (opts[OPT_DURATION].given &&
        profile_parse_duration(opts[OPT_DURATION].value, &o->duration, &err))
        goto bad;
    o->every = o->duration > 0 ? (o->duration / 10 < 1 ? 1 : o->duration / 10) : 60;
    if (opts[OPT_EVERY].given && profile_parse_duration(opts[OPT_EVERY].value, &o->every, &err))
        goto bad;
    if (o->every < 0.5) {
        say_error("profile start: --every %s is too often: a dump every 0.5 s at most",
                      opts[OPT_EVERY].value);
        return -1;
    }
    if (opts[OPT_SAMPLE].given) {
        char *end;
        long v = strtol(opts[OPT_SAMPLE].value, &end, 10);
        if (*end || end == opts[OPT_SAMPLE].value || v < 0 || v > 62) {
            say_error("profile start: --sample takes lg_sample, a number from 0 to 62 "
                          "(19: one sample per 512 KiB allocated, jemalloc's default)");
            return -1;
        }
        o->has_sample = true;
        o->sample = (unsigned)v;
    }
    o->peak = opts[OPT_PEAK].given;
    o->faults = opts[OPT_FAULTS].given;
    o->force = opts[OPT_FORCE].given;
    o->name = opts[OPT_NAME].value;
    o->save_dir = opts[OPT_SAVE].value;
    return 0;
bad:
    say_error("profile start: %s", err.msg);
    return -1;
}

static int start(struct session *s, struct cmd_option *opts)
{
    struct profile_run_options o;
    if (parse_start(opts, &o))
        return -1;
    interrupt_hold();
    int rc = profile_run_start(s, &o);
    interrupt_release();
    if (rc)
        return -1;
    const struct profile_run *r = s->run;
    if (opts[OPT_JSON].given)
        return state_json(s, r);
    char until[16] = "";
    if (r->o.duration > 0)
        wall_text(r->wall_start + (time_t)(r->o.duration + 0.5), until, sizeof until);
    fprintf(s->out, "%s started in process %d: a %sdump every %.1f s%s", r->name, r->pid,
            r->o.faults ? "page-fault " : "", r->o.every,
            r->o.peak ? " and at each new peak" : "");
    if (r->o.duration > 0)
        fprintf(s->out, " for %.1f s (until %s)", r->o.duration, until);
    else
        fprintf(s->out, " until 'profile stop'");
    fprintf(s->out, "; 'profile' shows it, 'profile stop' ends it early, 'profile wait' "
            "waits for its end\n");
    return 0;
}

/* Wait for the run's end, doing its ticks; Ctrl-C at the prompt stops the
 * run (with a last dump), a stop signal leaves it to the session's end. */
static int wait_run(struct session *s)
{
    while (profile_run_running(s) && !interrupt_stop_signal) {
        if (interrupt_take()) {
            profile_run_finish(s, RUN_STOPPED, "Ctrl-C during 'profile wait'", true);
            break;
        }
        double left = profile_run_next(s);
        double step = left < 0.2 ? left : 0.2;   /* wakes for Ctrl-C */
        struct timespec ts = {0, (long)(step * 1e9)};
        if (step > 0)
            nanosleep(&ts, NULL);
        profile_run_tick(s);
    }
    if (interrupt_stop_signal) {
        say_error("profile wait: interrupted");
        return -1;
    }
    return 0;
}

int cmd_profile(struct session *s, int argc, char **argv)
{
    struct cmd_option opts[NOPTS + 1] = {
        [OPT_DURATION] = {"duration", true, false, NULL},
        [OPT_EVERY] = {"every", true, false, NULL},
        [OPT_SAMPLE] = {"sample", true, false, NULL},
        [OPT_PEAK] = {"peak", false, false, NULL},
        [OPT_NAME] = {"name", true, false, NULL},
        [OPT_FORCE] = {"force", false, false, NULL},
        [OPT_SAVE] = {"save", true, false, NULL},
        [OPT_JSON] = {"json", false, false, NULL},
        [OPT_FAULTS] = {"faults", false, false, NULL},
        [NOPTS] = {NULL, false, false, NULL},
    };
    char *pos[3];
    int npos = options_parse(argc, argv, opts, pos, 3);
    if (npos < 0)
        return -1;
    const char *sub = npos ? pos[0] : "state";
    size_t k = 0;
    while (k < sizeof subs / sizeof subs[0] && strcmp(subs[k].sub, sub) != 0)
        k++;
    if (k == sizeof subs / sizeof subs[0]) {
        say_error("profile: unknown subcommand '%s' (start, state, stop, wait, save)", sub);
        return -1;
    }
    for (int i = 0; i < NOPTS; i++)
        if (opts[i].given && !(subs[k].allowed & (1u << i))) {
            say_error("profile %s does not take --%s", sub, opts[i].name);
            return -1;
        }
    int maxpos = strcmp(sub, "save") == 0 ? 3 : 1;
    if (npos > maxpos || (strcmp(sub, "save") == 0 && npos < 2)) {
        say_error("usage: profile %s", strcmp(sub, "save") == 0 ? "save DIR [SERIES]"
                      : strcmp(sub, "start") == 0 ? "start [--duration D] [--every I] "
                      "[--sample N] [--peak] [--faults] [--name NAME] [--save DIR] [--force]" : sub);
        return -1;
    }
    if (subs[k].needs_target && !s->target) {
        say_error("profile %s needs a process: attach to one first", sub);
        return -1;
    }
    bool json = opts[OPT_JSON].given;
    if (strcmp(sub, "start") == 0)
        return start(s, opts);
    if (strcmp(sub, "save") == 0)
        return profile_run_save(s, npos > 2 ? pos[2] : s->run ? s->run->name : NULL, pos[1]);
    if (strcmp(sub, "stop") == 0) {
        if (!profile_run_running(s)) {
            say_error("profile stop: no run is running%s", s->run ? " ('profile' shows "
                          "the last one)" : "");
            return -1;
        }
        profile_run_finish(s, RUN_STOPPED, "profile stop", true);
        return json ? state_print(s, true) : 0;
    }
    if (strcmp(sub, "wait") == 0) {
        if (!s->run) {
            say_error("profile wait: no run in this session: 'profile start' begins one");
            return -1;
        }
        if (wait_run(s))
            return -1;
        return json ? state_print(s, true) : 0;
    }
    return state_print(s, json);
}
