/* profile_run.c - a profiling run's life: start (settings read, profiling
 * turned on, one stop), ticks (a dump when due, the peak files jemalloc
 * wrote collected), the end (a last dump, the settings put back, the
 * series saved when asked).  The run changes the process only through the
 * mallctl checks every call goes through, and puts back exactly what it
 * read before its first change.  (Its on-disk form: repl/run_dir.c.) */
#include "session/profile_run.h"

#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/analysis/analysis.h"
#include "lib/base/mono_clock.h"
#include "lib/base/text_escape.h"
#include "session/control.h"
#include "session/faults.h"
#include "session/sampling.h"
#include "session/say.h"

#define PEAK_PREFIX "peak"     /* jemalloc writes PEAK_PREFIX.PID.SEQ.uN.heap */
#define MAX_FAILURES 3         /* dumps failing in a row end the run */
#define FAULTS_READ_S 0.02     /* a --faults run reads the kernel's rings this often */


int profile_parse_duration(const char *text, double *seconds, struct mp_error *err)
{
    static const struct { const char *unit; double s; } units[] = {
        {"", 1}, {"s", 1}, {"ms", 0.001}, {"m", 60}, {"min", 60}, {"h", 3600}, {"d", 86400},
    };
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || errno || !isfinite(v) || *text == '-' || *text == '+' ||
        (text[0] == '0' && (text[1] == 'x' || text[1] == 'X')))
        goto bad;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (strcmp(end, units[i].unit) != 0)
            continue;
        v *= units[i].s;
        if (!(v > 0) || v > 30 * 86400.0)
            return mp_error_set(err, "duration '%s' is out of range (more than 0, at "
                                "most 30 days)", text);
        *seconds = v;
        return 0;
    }
bad:
    return mp_error_set(err, "'%s' is not a duration: write a number with ms, s, m, h "
                        "or d after it (500ms, 20s, 5m, 1h), or plain seconds", text);
}

double profile_run_next(const struct session *s)
{
    if (!profile_run_running(s))
        return -1;
    const struct profile_run *r = s->run;
    double next = r->next_dump;
    if (r->o.duration > 0 && r->t_end < next)
        next = r->t_end;
    if (r->peak_armed && next > mono_clock_s() + 1.0)
        next = mono_clock_s() + 1.0;       /* peak files are collected every second */
    if (r->faults && next > mono_clock_s() + FAULTS_READ_S)
        next = mono_clock_s() + FAULTS_READ_S;  /* the rings read before they fill */
    double left = next - mono_clock_s();
    return left > 0 ? left : 0;
}

/* ---- start ---- */

static bool name_taken(struct session *s, const char *name)
{
    size_t *idx;
    long n = session_series(s, name, &idx);
    free(idx);
    return n != 0 || session_find_dump(s, name) != NULL;
}

static int pick_name(struct session *s, const struct profile_run_options *o, char *buf,
                     size_t len)
{
    if (o->name) {
        if (!session_series_name_ok(o->name)) {
            say_error("profile start: '%s' cannot name a run: use 1 to 40 letters, "
                          "digits, '_' or '-' (not only digits, not starting with '-')",
                          o->name);
            return -1;
        }
        if (name_taken(s, o->name)) {
            say_error("profile start: the session already has a series or dump named "
                          "'%s': choose another --name", o->name);
            return -1;
        }
        snprintf(buf, len, "%s", o->name);
        return 0;
    }
    for (unsigned i = 1; i < 100000; i++) {
        snprintf(buf, len, "run%u", i);
        if (!name_taken(s, buf))
            return 0;
    }
    say_error("profile start: no free run name: give one with --name");
    return -1;
}

/* Read what the run will change, so that it can be put back. */
static int read_before(struct session *s, struct profile_run *r)
{
    uint64_t prefix_addr = 0;
    struct mallctl_call calls[4] = {
        {.name = "prof.active", .old = &r->active_before, .oldlen = sizeof r->active_before},
        {.name = "prof.lg_sample", .old = &r->lg_before, .oldlen = sizeof r->lg_before},
        {.name = "prof.gdump", .old = &r->gdump_before, .oldlen = sizeof r->gdump_before},
        {.name = "opt.prof_prefix", .old = &prefix_addr, .oldlen = sizeof prefix_addr},
    };
    size_t n = r->o.peak ? 4 : 2;
    if (control_run_calls(s, calls, n))
        return -1;
    for (size_t i = 0; i < n; i++)
        if (calls[i].ret)
            return control_mallctl_failed(s, calls[i].name, calls[i].ret, false);
    if (!r->o.peak)
        return 0;
    struct mp_error err;
    if (!prefix_addr || target_read_string(s->target, prefix_addr, r->prefix_before,
                                           sizeof r->prefix_before, &err)) {
        say_error("profile start --peak: cannot read opt.prof_prefix, which "
                      "prof.prefix must be put back to afterwards: leave out --peak");
        return -1;
    }
    return 0;
}

/* Point jemalloc's high-water-mark dumps at memprof's private directory. */
static int no_prefix(struct session *s)
{
    char v[64];
    jemalloc_version_text(&s->prof_conf.version, v, sizeof v);
    say_error("profile start --peak: this jemalloc (%s) has no prof.prefix (it came "
              "with jemalloc 5.3), so its high-water-mark dumps cannot be sent to "
              "memprof's private directory: leave out --peak", v);
    return -1;
}

static int arm_peak(struct session *s, struct profile_run *r)
{
    if (s->prof_conf.version.known && !jemalloc_has_prof_prefix(&s->prof_conf.version))
        return no_prefix(s);        /* before any call: nothing to put back */
    struct mp_error err;
    const char *dir = target_private_dir(s->target, s->dump_dir, &err);
    if (!dir) {
        say_error("profile start --peak: %s", err.msg);
        return -1;
    }
    char prefix[1024];
    if ((size_t)snprintf(prefix, sizeof prefix, "%s/" PEAK_PREFIX, dir) >= sizeof prefix) {
        say_error("profile start --peak: the private directory's path is too long");
        return -1;
    }
    bool on = true;
    struct mallctl_call calls[2] = {
        {.name = "prof.prefix", .new_string = prefix},
        {.name = "prof.gdump", .new = &on, .newlen = sizeof on},
    };
    if (control_run_calls(s, calls, 2))
        return -1;
    if (calls[0].ret && !calls[1].ret) {
        /* gdump on without memprof's prefix would write into the
         * process's own directory: put it back */
        struct mallctl_call back = {.name = "prof.gdump", .new = &r->gdump_before,
                                    .newlen = sizeof r->gdump_before};
        if (control_run_calls(s, &back, 1) == 0 && back.ret)
            control_mallctl_failed(s, "prof.gdump", back.ret, true);
    }
    if (calls[0].ret == ENOENT)
        return no_prefix(s);
    if (calls[0].ret)
        return control_mallctl_failed(s, "prof.prefix", calls[0].ret, true);
    r->peak_armed = true;
    if (calls[1].ret)
        return control_mallctl_failed(s, "prof.gdump", calls[1].ret, true);
    return 0;
}

/* Put back what the run changed, in one stop.  Returns 0 when all was put
 * back. */
static int restore(struct session *s, struct profile_run *r, bool rate_set, bool active_set)
{
    if (!s->target || target_calls_refused(s->target))
        return -1;
    if (r->sampled)
        return sampling_run_restore(s, r->active_before, (unsigned)r->lg_before);
    struct mallctl_call calls[4];
    size_t n = 0;
    bool gdump = r->gdump_before, active = r->active_before;
    size_t lg = r->lg_before;
    if (r->peak_armed) {
        calls[n++] = (struct mallctl_call){.name = "prof.gdump", .new = &gdump,
                                           .newlen = sizeof gdump};
        calls[n++] = (struct mallctl_call){.name = "prof.prefix",
                                           .new_string = r->prefix_before};
    }
    if (rate_set)
        calls[n++] = (struct mallctl_call){.name = "prof.reset", .new = &lg, .newlen = sizeof lg};
    if (active_set)
        calls[n++] = (struct mallctl_call){.name = "prof.active", .new = &active,
                                           .newlen = sizeof active};
    if (n == 0)
        return 0;
    if (control_run_calls(s, calls, n))
        return -1;
    int rc = 0;
    for (size_t i = 0; i < n; i++)
        if (calls[i].ret) {
            control_mallctl_failed(s, calls[i].name, calls[i].ret, true);
            rc = -1;
        }
    if (rc == 0)
        r->peak_armed = false;
    return rc;
}

/* A run with memprof's sampler: it is put in (at the run's rate) for the
 * run, and put back as it was at the end. */
static int start_sampled(struct session *s, struct profile_run *r)
{
    if (r->o.peak) {
        say_error("profile start --peak: dumps at the process's high-water marks are "
                  "jemalloc's own (prof.gdump); memprof's sampler has none: leave out "
                  "--peak");
        return -1;
    }
    r->sampled = true;
    r->active_before = sampler_is_on(s->sampler);
    r->lg_before = sampler_lg_sample(s->sampler);
    return sampling_run_on(s, r->o.has_sample ? r->o.sample : (unsigned)r->lg_before);
}

/* A run of page-fault dumps: the kernel's events opened for the run,
 * nothing of the process's changed (so nothing to put back). */
static int start_faults(struct session *s, struct profile_run *r)
{
    if (r->o.peak || r->o.has_sample) {
        say_error("profile start --faults: %s is the heap's; a run of fault dumps has "
                  "none: leave it out", r->o.peak ? "--peak" : "--sample");
        return -1;
    }
    r->faults = faults_sampler_open(s, FAULTS_PERIOD_DEFAULT, 0);
    return r->faults ? 0 : -1;
}

static void run_begins(struct session *s, struct profile_run *r)
{
    r->state = RUN_RUNNING;
    r->t_start = mono_clock_s();
    r->t_end = r->o.duration > 0 ? r->t_start + r->o.duration : 0;
    r->next_dump = r->t_start + r->o.every;
    r->wall_start = time(NULL);
    profile_run_free(s->run);
    s->run = r;
}

int profile_run_start(struct session *s, const struct profile_run_options *o)
{
    if (profile_run_running(s)) {
        say_error("profile start: %s is still running in process %d ('profile stop' "
                      "ends it; one run at a time)", s->run->name, s->run->pid);
        return -1;
    }
    if (o->duration > 0 && o->every > o->duration) {
        say_error("profile start: --every (%.3g s) is longer than --duration "
                      "(%.3g s): no dump would fall inside the run", o->every, o->duration);
        return -1;
    }
    struct profile_run *r = calloc(1, sizeof *r);
    if (!r || (o->save_dir && !(r->save_dir = strdup(o->save_dir)))) {
        profile_run_free(r);
        say_error("out of memory");
        return -1;
    }
    r->o = *o;
    r->o.name = NULL;
    r->o.save_dir = NULL;
    r->pid = (int)target_pid(s->target);
    if (o->faults) {
        if (pick_name(s, o, r->name, sizeof r->name) || start_faults(s, r)) {
            profile_run_free(r);
            return -1;
        }
        run_begins(s, r);
        return 0;
    }
    if (sampling_applies(s)) {
        if (pick_name(s, o, r->name, sizeof r->name) || start_sampled(s, r)) {
            profile_run_free(r);
            return -1;
        }
        run_begins(s, r);
        return 0;
    }
    if (pick_name(s, o, r->name, sizeof r->name) ||
        control_profiling_possible(s) ||
        control_own_profiler_sees(s, "profile start") ||
        control_owner_allows(s, "start a profiling run (it turns profiling on and sets "
                             "the rate for its duration)", o->force) ||
        (o->has_sample && control_sample_check(s, o->sample, o->force)) ||
        read_before(s, r)) {
        profile_run_free(r);
        return -1;
    }
    if (r->o.peak && arm_peak(s, r)) {
        restore(s, r, false, false);
        profile_run_free(r);
        return -1;
    }
    bool on = true;
    size_t lg = o->sample;
    struct mallctl_call calls[2];
    size_t n = 0;
    if (o->has_sample)
        calls[n++] = (struct mallctl_call){.name = "prof.reset", .new = &lg, .newlen = sizeof lg};
    calls[n++] = (struct mallctl_call){.name = "prof.active", .new = &on, .newlen = sizeof on};
    if (control_run_calls(s, calls, n) ||
        (calls[0].ret && control_mallctl_failed(s, calls[0].name, calls[0].ret, true)) ||
        (n == 2 && calls[1].ret && control_mallctl_failed(s, calls[1].name, calls[1].ret, true))) {
        restore(s, r, o->has_sample && !calls[0].ret, true);
        profile_run_free(r);
        return -1;
    }
    run_begins(s, r);
    return 0;
}

/* ---- ticks ---- */

/* A --faults run's dump: the faults since the last one. */
static struct session_dump *faults_run_dump(struct session *s, struct profile_run *r,
                                            const char *name)
{
    struct faults_report rep;
    if (faults_sampler_dump(s, r->faults, name, &rep) < 0)
        return NULL;
    if (rep.counts.lost)
        say_status(s, "note: %s: the kernel dropped %" PRIu64 " samples (a ring buffer "
                   "filled between two reads)\n", name, rep.counts.lost);
    return rep.dump;
}

/* A dump into the run's series.  When
 * it fails because the process is gone, the run ends there. */
static bool run_dump(struct session *s, struct profile_run *r)
{
    char name[64];
    snprintf(name, sizeof name, "%s.%u", r->name, r->ndumps + 1);
    struct session_dump *d = r->faults ? faults_run_dump(s, r, name)
                           : r->sampled ? sampling_dump(s, name, NULL)
                                        : control_dump_take(s, name, NULL);
    if (d) {
        session_series_add(s, d, r->name);
        r->ndumps++;
        r->failures = 0;
        r->pending_peak[0] = 0;        /* a peak after this one is a new one */
        snprintf(r->latest, sizeof r->latest, "%s", d->name);
        return true;
    }
    const char *refused = s->target ? target_calls_refused(s->target) : "detached";
    if (refused) {
        r->state = RUN_PROCESS_ENDED;
        snprintf(r->why, sizeof r->why, "%s", refused);
    } else if (++r->failures >= MAX_FAILURES) {
        r->state = RUN_FAILED;
        snprintf(r->why, sizeof r->why, "%u dumps in a row failed", r->failures);
    }
    return false;
}

static long dump_index(struct session *s, const char *name)
{
    for (size_t i = s->ndumps; i > 0; i--)
        if (strcmp(s->dumps[i - 1].name, name) == 0)
            return (long)i - 1;
    return -1;
}

/* Keep the new peak dump d if it holds more than the peak kept since the
 * last periodic dump (which it then replaces), else drop it: jemalloc
 * writes one at every step of a climb, and only the top of it tells. */
static void keep_highest_peak(struct session *s, struct profile_run *r, struct session_dump *d)
{
    long mine = d - s->dumps, other = r->pending_peak[0] ? dump_index(s, r->pending_peak) : -1;
    if (other >= 0 && s->dumps[other].info.total.inuse_bytes >= d->info.total.inuse_bytes) {
        session_remove_dump(s, (size_t)mine);
        return;
    }
    unsigned k = other >= 0 ? s->dumps[other].series_seq : 0;
    if (other >= 0) {
        session_remove_dump(s, (size_t)other);
        if (other < mine)
            mine--;
    } else {
        r->npeaks++;
    }
    d = &s->dumps[mine];
    d->peak = true;
    snprintf(d->name, sizeof d->name, "%s.peak%u", r->name, r->npeaks);
    session_series_add(s, d, r->name);
    if (k)
        d->series_seq = k;     /* in the place of the one it replaces */
    snprintf(r->pending_peak, sizeof r->pending_peak, "%s", d->name);
    snprintf(r->latest, sizeof r->latest, "%s", d->name);
}

/* Take the high-water-mark dumps jemalloc wrote into the private
 * directory: only files at least min_age seconds old (jemalloc may still
 * be writing a younger one). */
static void collect_peaks(struct session *s, struct profile_run *r, double min_age)
{
    char **names;
    long n = target_private_dir_list(s->target, PEAK_PREFIX ".", &names);
    for (long i = 0; i < n; i++) {
        char *data;
        size_t len;
        struct mp_error err;
        int rc = target_private_dir_take(s->target, names[i], min_age, &data, &len, &err);
        if (rc < 0)
            say_status(s, "warning: %s: a dump at a peak was lost: %s\n", r->name, err.msg);
        if (rc == 0) {
            struct session_dump *d = control_dump_add(s, data, len, "peak", NULL);
            if (d)
                keep_highest_peak(s, r, d);
            free(data);
        }
        free(names[i]);
    }
    free(names);
}

static void finish_run(struct session *s, enum run_state state, const char *why,
                       bool final_dump);

static void tick_run(struct session *s)
{
    struct profile_run *r = s->run;
    if (!s->target) {
        finish_run(s, RUN_PROCESS_ENDED, "memprof detached", false);
        return;
    }
    double now = mono_clock_s();
    if (r->peak_armed)
        collect_peaks(s, r, 1.0);
    if (r->faults)
        faults_sampler_read(r->faults, 0);
    if (r->o.duration > 0 && now >= r->t_end) {
        finish_run(s, RUN_COMPLETED, "its duration ran out", true);
        return;
    }
    if (now < r->next_dump)
        return;
    r->next_dump += r->o.every;
    if (r->next_dump <= now)           /* a slow dump: no burst to catch up */
        r->next_dump = now + r->o.every;
    if (!run_dump(s, r) && r->state != RUN_RUNNING)
        finish_run(s, r->state, r->why, false);
}

/* Calls into the process are never cut by a Ctrl-C at the prompt: it is
 * held around them (and nowhere nested: only these entry points hold). */
void profile_run_tick(struct session *s)
{
    if (!profile_run_running(s))
        return;
    session_hold_interrupt(s);
    tick_run(s);
    session_profiles_trim(s);  /* a long run: only the latest dumps stay parsed */
    session_release_interrupt(s);
}

/* ---- the end ---- */

static void finish_run(struct session *s, enum run_state state, const char *why,
                       bool final_dump)
{
    struct profile_run *r = s->run;
    if (!r || r->finished)
        return;
    r->finished = true;
    if (r->state == RUN_RUNNING && final_dump && s->target)
        run_dump(s, r);
    faults_sampler_close(r->faults);
    r->faults = NULL;
    bool gone = r->state == RUN_PROCESS_ENDED || !s->target;
    if (r->state == RUN_RUNNING) {     /* else run_dump said how it ended */
        r->state = state;
        snprintf(r->why, sizeof r->why, "%s", why);
    }
    r->wall_end = time(NULL);
    r->t_stopped = mono_clock_s();
    int pid = r->pid;
    char put_back[160] = "";
    if (gone && r->o.peak && s->target)
        collect_peaks(s, r, 0);        /* what jemalloc wrote before the end */
    if (!gone && r->o.faults) {
        snprintf(put_back, sizeof put_back, "; the kernel's events closed");
    } else if (!gone) {
        bool ok = restore(s, r, r->o.has_sample, true) == 0;
        if (r->o.peak)
            collect_peaks(s, r, 0);
        const char *items[4] = {r->sampled ? "memprof's sampler (in or out)" : "prof.active"};
        size_t n = 1;
        if (r->o.has_sample)
            items[n++] = "the rate";
        if (r->o.peak) {
            items[n++] = "prof.gdump";
            items[n++] = "prof.prefix";
        }
        char list[96] = "";
        for (size_t i = 0; i < n; i++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s",
                     i == 0 ? "" : i + 1 == n ? " and " : ", ", items[i]);
        snprintf(put_back, sizeof put_back, ok ? "; %s put back as before"
                 : "; could NOT put back %s: check with 'info'", list);
    }
    char what[96];
    snprintf(what, sizeof what, "%u dump%s", r->ndumps, r->ndumps == 1 ? "" : "s");
    if (r->npeaks)
        snprintf(what + strlen(what), sizeof what - strlen(what), " and %u at peaks", r->npeaks);
    char esc_buf[TEXT_ESCAPE_BUF];
    const char *esc = text_escape(r->why, esc_buf, sizeof esc_buf);
    fprintf(stderr, "memprof: %s %s (%s) in process %d after %.1f s: %s%s; 'trend %s', "
            "'top %s' and 'profile save DIR' use them\n", r->name,
            profile_run_state_name(r->state), esc, pid, r->t_stopped - r->t_start, what,
            put_back, r->name, r->name);
    if (r->save_dir && r->ndumps + r->npeaks > 0)
        profile_run_save(s, r->name, r->save_dir);
}

void profile_run_finish(struct session *s, enum run_state state, const char *why,
                        bool final_dump)
{
    session_hold_interrupt(s);
    finish_run(s, state, why, final_dump);
    session_release_interrupt(s);
}

void profile_run_session_end(struct session *s, bool signalled)
{
    if (!profile_run_running(s))
        return;
    profile_run_finish(s, RUN_STOPPED, signalled ? "memprof was asked to end"
                       : "the session ended before it; 'profile wait' lets a run finish",
                       !signalled);
}
