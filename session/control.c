/* control.c - the rules of a session with a live process, shared by every
 * front end: every mallctl call checked against jemalloc's own table of
 * names (mallctl_check_call) before anything is stopped (a call of the
 * wrong shape can fault inside jemalloc with its ctl mutex held), failures
 * turned into sentences, memprof's hands kept off the profiling of a
 * process whose owner started it (opt.prof_active) unless forced, what
 * the session changed (prof.active, the rate, prof.gdump) kept so that an
 * error exit puts it back, the sampling rate's cost checked, and heap
 * dumps taken into the session. */
#include "session/control.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/analysis/analysis.h"
#include "lib/base/file_write.h"
#include "lib/base/text_escape.h"
#include "lib/proc/maps.h"
#include "session/say.h"


const struct jemalloc_copy *control_selected_copy(struct session *s)
{
    return jemalloc_copy(s->target, jemalloc_selected(s->target));
}

void control_conf_var(struct session *s, char *buf, size_t len)
{
    mallctl_conf_var(control_selected_copy(s)->prefix, buf, len);
}

/* Say why mallctl refused name (ret != 0); returns -1. */
int control_mallctl_failed(struct session *s, const char *name, int ret, bool writing)
{
    char var[64];
    struct mp_error err;
    control_conf_var(s, var, sizeof var);
    if (s->prof_conf.known &&
        mallctl_failure_is_no_profiling(name, ret, s->prof_conf.config_prof,
                                        s->prof_conf.opt_prof)) {
        mallctl_explain_no_profiling(s->prof_conf.config_prof, var, &err);
        say_error("%s: %s", name, err.msg);
        return -1;
    }
    mallctl_explain(name, ret, writing, var, &err);
    say_error("%s", err.msg);
    return -1;
}

/* Run the calls, each first checked against the table (unknown: the entry
 * standing for a name the table lacks, made from the user's --type); on a
 * refusal or a failure to call at all, say so and return -1. */
static int check_calls_as(struct mallctl_call *calls, size_t n,
                          const struct mallctl_info *unknown)
{
    struct mp_error err;
    for (size_t i = 0; i < n; i++) {
        const struct mallctl_info *info = mallctl_lookup(calls[i].name);
        bool string = calls[i].new_string && !calls[i].new;
        struct mallctl_shape shape = {
            .read = calls[i].old != NULL,
            .oldlen = calls[i].old ? calls[i].oldlen : 0,
            .write = calls[i].new || string,
            .newlen = string ? sizeof(char *) : calls[i].new ? calls[i].newlen : 0,
            .string = string ? calls[i].new_string : NULL,
        };
        if (mallctl_check_call(calls[i].name, info ? info : unknown, &shape, &err)) {
            say_error("%s", err.msg);
            return -1;
        }
    }
    return 0;
}

int control_check_calls(struct mallctl_call *calls, size_t n,
                        const struct mallctl_info *unknown)
{
    return check_calls_as(calls, n, unknown);
}

static int run_calls_as(struct session *s, struct mallctl_call *calls, size_t n,
                        const struct mallctl_info *unknown)
{
    struct mp_error err;
    if (check_calls_as(calls, n, unknown))
        return -1;
    if (jemalloc_mallctl(s->target, calls, n, &err) == 0)
        return 0;
    return control_call_failed(s, &err);
}

int control_call_failed(struct session *s, const struct mp_error *err)
{
    say_error("%s", err->msg);
    if (target_must_exit(s->target)) {
        say_error("exiting: memprof left a call running in a thread of process %d "
                  "(what becomes of that thread: above)", (int)target_pid(s->target));
        s->quit = true;
    }
    return -1;
}

int control_run_calls(struct session *s, struct mallctl_call *calls, size_t n)
{
    return run_calls_as(s, calls, n, NULL);
}

int control_run_calls_as(struct session *s, struct mallctl_call *calls, size_t n,
                         const struct mallctl_info *unknown)
{
    return run_calls_as(s, calls, n, unknown);
}

/* Read every query in one stop; strings are fetched afterwards without
 * stopping anything.  A per-name failure is left in q->ret. */
static int control_query_run(struct session *s, struct query *q, size_t n)
{
    struct mallctl_call calls[32];
    if (n > sizeof calls / sizeof *calls)
        n = sizeof calls / sizeof *calls;
    for (size_t i = 0; i < n; i++) {
        const struct mallctl_info *info = mallctl_lookup(q[i].name);
        memset(&q[i].v, 0, sizeof q[i].v);
        q[i].str[0] = '\0';
        calls[i] = (struct mallctl_call){
            .name = q[i].name,
            .old = &q[i].v,
            .oldlen = info ? mallctl_type_size(info->type) : sizeof q[i].v,
        };
    }
    if (control_run_calls(s, calls, n))
        return -1;
    for (size_t i = 0; i < n; i++) {
        q[i].ret = calls[i].ret;
        const struct mallctl_info *info = mallctl_lookup(q[i].name);
        if (q[i].ret == 0 && info && info->type == MALLCTL_STRING) {
            struct mp_error err;
            if (!q[i].v.u64)
                snprintf(q[i].str, sizeof q[i].str, "(null)");
            else if (target_read_string(s->target, q[i].v.u64, q[i].str,
                                        sizeof q[i].str, &err))
                snprintf(q[i].str, sizeof q[i].str, "(unreadable: %.200s)", err.msg);
        }
    }
    return 0;
}

struct query *control_query_find(struct query *q, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(q[i].name, name) == 0)
            return &q[i];
    return NULL;
}

/* The value of one query as text, or why it is missing. */
const char *control_query_text(const struct query *q, char *buf, size_t len)
{
    const struct mallctl_info *info = mallctl_lookup(q->name);
    if (q->ret != 0) {
        snprintf(buf, len, "(unavailable: %s)", strerror(q->ret));
        return buf;
    }
    if (info && info->type == MALLCTL_STRING)
        return text_escape(q->str, buf, len);
    mallctl_value_format(info ? info->type : MALLCTL_U64, &q->v, buf, len);
    return buf;
}

/* Note that this session turned profiling on or off (for info and dump). */
void control_prof_on_note(struct session *s, bool was, bool now)
{
    if (now && !was)
        s->prof_on = (struct session_prof_on){.since = time(NULL)};
    else if (!now)
        s->prof_on = (struct session_prof_on){.off_since = was ? time(NULL)
                                                               : s->prof_on.off_since};
}

/* "since 14:02:11 (95 s ago)" */
void control_since_text(time_t since, char *buf, size_t len)
{
    struct tm tm;
    char hms[16] = "?";
    if (localtime_r(&since, &tm))
        strftime(hms, sizeof hms, "%H:%M:%S", &tm);
    snprintf(buf, len, "%s (%lld s ago)", hms, (long long)(time(NULL) - since));
}

/* The profiling state that decides what memprof may do and must warn about. */
static const char *const control_state_names[CONTROL_NSTATE] = {
    "version", "config.prof", "opt.prof", "opt.prof_active", "prof.active",
    "prof.lg_sample", "opt.lg_prof_interval", "opt.prof_prefix", "prof.gdump",
};

/* Read the state; keep what is fixed at the process's start. */
int control_state_read(struct session *s, struct query *q)
{
    for (size_t i = 0; i < CONTROL_NSTATE; i++)
        q[i] = (struct query){.name = control_state_names[i], .ret = -1};
    if (control_query_run(s, q, CONTROL_NSTATE))
        return -1;
    struct query *cfg = control_query_find(q, CONTROL_NSTATE, "config.prof");
    struct query *opt = control_query_find(q, CONTROL_NSTATE, "opt.prof");
    struct query *optact = control_query_find(q, CONTROL_NSTATE, "opt.prof_active");
    struct query *ver = control_query_find(q, CONTROL_NSTATE, "version");
    struct query *act = control_query_find(q, CONTROL_NSTATE, "prof.active");
    bool was_blind = s->prof_conf.known && s->prof_conf.own_profiler_blind;
    s->prof_conf = (struct session_prof_conf){
        .known = true,
        .config_prof = cfg->ret == 0 && cfg->v.b,
        .opt_prof = opt->ret == 0 && opt->v.b,
        .opt_prof_active = optact->ret == 0 && optact->v.b,
    };
    if (ver->ret == 0)
        jemalloc_version_parse(ver->str, sizeof ver->str, &s->prof_conf.version);
    /* On 5.2 the process's threads have run with profiling off unless it
     * was on from the start and still is; once blind, a thread stays so. */
    bool on_since_start = s->prof_conf.opt_prof_active && act->ret == 0 && act->v.b;
    s->prof_conf.own_profiler_blind =
        s->prof_conf.config_prof && s->prof_conf.opt_prof &&
        jemalloc_inactive_threads_stop_sampling(&s->prof_conf.version) &&
        (was_blind || !on_since_start);
    return 0;
}

/* Warnings a careful operator wants before memprof changes anything.  They
 * follow the live state (prof.active now), and tell profiling its owner
 * started (opt.prof_active) from profiling turned on at run time. */
/* Make sure s->prof_conf holds the selected copy's settings (forgotten
 * when another copy is picked). */
int control_prof_conf_read(struct session *s)
{
    struct query q[CONTROL_NSTATE];
    return s->prof_conf.known ? 0 : control_state_read(s, q);
}

/* The MALLOC_CONF rule: a process whose owner turned profiling on at start
 * keeps it as its owner set it unless the user insists. */
int control_owner_allows(struct session *s, const char *what, bool force)
{
    if (force)
        return 0;
    if (control_prof_conf_read(s))
        return -1;
    if (!s->prof_conf.opt_prof_active)
        return 0;
    char var[64];
    control_conf_var(s, var, sizeof var);
    say_error("this process's owner turned profiling on at its start "
                  "(opt.prof_active is true, from its %s or built-in malloc_conf) "
                  "and may rely on it: memprof will not %s unless you add --force "
                  "(reading and dumping need no --force)", var, what);
    return -1;
}

/* While a profiling run goes on, it alone changes prof.active, the rate,
 * prof.gdump and prof.prefix: it puts back at its end what it read at its
 * start, so a change meanwhile would be undone, or undo the run. */
int control_run_owns_profiling(struct session *s, const char *cmd)
{
    if (!profile_run_running(s))
        return 0;
    say_error("%s: profiling run %s controls profiling in process %d until it ends: "
                  "'profile stop' first (it puts the settings back as they were)", cmd,
                  s->run->name, s->run->pid);
    return -1;
}

const char *control_what_works(enum allocator_kind k)
{
    return allocator_has_stats(k) ? "'info', 'stats', 'memory' and 'purge'"
                                  : "'info' and 'memory'";
}

/* Profiling must be compiled in and enabled at start for any prof change:
 * jemalloc 5.1 accepts prof.active=true without opt.prof and samples
 * nothing, so this is refused before any call. */
int control_profiling_possible(struct session *s)
{
    if (s->alloc.kind != ALLOCATOR_JEMALLOC) {
        /* the front ends send 'prof' and 'dump' to memprof's sampler here
         * (sampling_applies) before they ask */
        say_error("process %d does not use jemalloc (it uses %s), so jemalloc's "
                  "profiler does not apply: 'prof on' and 'dump' go to memprof's heap "
                  "sampler there", (int)target_pid(s->target),
                  allocator_kind_name(s->alloc.kind));
        return -1;
    }
    if (control_prof_conf_read(s))
        return -1;
    if (s->prof_conf.config_prof && s->prof_conf.opt_prof)
        return 0;
    char var[64];
    struct mp_error err;
    control_conf_var(s, var, sizeof var);
    mallctl_explain_no_profiling(s->prof_conf.config_prof, var, &err);
    say_error("%s", err.msg);
    return -1;
}

const char *control_no_sampler_for_copy(struct session *s)
{
    const struct jemalloc_copy *c = control_selected_copy(s);
    return c && c->static_copy ? "this jemalloc is linked into the program, whose calls "
                                 "to it no call table carries"
                               : "it is not available in this session";
}

int control_own_profiler_sees(struct session *s, const char *cmd)
{
    if (!s->prof_conf.own_profiler_blind)
        return 0;
    char var[64], v[64];
    control_conf_var(s, var, sizeof var);
    jemalloc_version_text(&s->prof_conf.version, v, sizeof v);
    say_error("%s: in jemalloc %s, %s, so turning prof.active on would profile "
              "nothing of this process; and memprof's sampler cannot stand in (%s). "
              "Restart it with %s=prof:true (profiling active from its start), or "
              "give it jemalloc 5.3; nothing was changed", cmd, v,
              jemalloc_inactive_threads_text, control_no_sampler_for_copy(s), var);
    return -1;
}

unsigned control_narenas(struct session *s)
{
    if (s->narenas || !s->target || target_calls_refused(s->target) ||
        s->alloc.kind != ALLOCATOR_JEMALLOC)
        return s->narenas;
    struct query q = {.name = "arenas.narenas", .ret = -1};
    if (control_query_run(s, &q, 1) == 0 && q.ret == 0)
        s->narenas = q.v.u32;
    return s->narenas;
}

/* ---- what the session changed ---- */

void control_note_change(struct session_setting *st, uint64_t before, uint64_t now)
{
    if (!st->changed)
        st->before = before;
    st->now = now;
    st->changed = now != st->before;
}

static double control_monotonic_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Remember when the samples a dump can hold started to accrue (for the
 * hint on empty dumps): profiling turned on, or the counters reset. */
void control_note_counting(struct session *s, bool counting)
{
    s->counting_since = counting ? control_monotonic_seconds() : 0;
    s->counting_allocated_known = false;
}

void control_note_allocated(struct session *s, int ret, size_t allocated)
{
    s->counting_allocated_known = ret == 0 && s->counting_since > 0;
    s->counting_allocated = allocated;
}

/* Put back what the session changed, in one stop, and say so. */
/* Not in jemalloc(3) (experimental): memprof's own knowledge of it, so
 * that its calls are checked like every other. */
const struct mallctl_info control_recent_info = {
    .name = "experimental.prof_recent.alloc_max", .type = MALLCTL_SSIZE,
    .write_type = MALLCTL_SSIZE, .access = MALLCTL_RW, .requires = "--enable-prof",
    .since = "5.3.0",
};

void control_note_decay(struct session *s, const char *name, int64_t before, int64_t now)
{
    struct session_changes *c = &s->changes;
    for (size_t i = 0; i < c->ndecay; i++)
        if (strcmp(c->decay[i].name, name) == 0) {
            c->decay[i].now = now;
            return;
        }
    struct session_decay_time *grown = realloc(c->decay, (c->ndecay + 1) * sizeof *grown);
    if (!grown) {
        fprintf(stderr, "warning: out of memory: memprof will not remember that this "
                "session set %s (it was %" PRId64 ")\n", name, before);
        return;
    }
    c->decay = grown;
    struct session_decay_time *d = &c->decay[c->ndecay++];
    snprintf(d->name, sizeof d->name, "%s", name);
    d->before = before;
    d->now = now;
}

/* How many decay times differ from their value before the session. */
static size_t decay_changed(const struct session_changes *c)
{
    size_t n = 0;
    for (size_t i = 0; i < c->ndecay; i++)
        n += c->decay[i].before != c->decay[i].now;
    return n;
}

static bool anything_changed(const struct session_changes *c)
{
    return c->active.changed || c->rate.changed || c->gdump.changed || c->recent.changed ||
           decay_changed(c);
}

/* Put back what the session changed, in one stop, and say so. */
static void changes_restore(struct session *s)
{
    struct session_changes *c = &s->changes;
    struct mallctl_call *calls = calloc(4 + c->ndecay, sizeof *calls);
    ssize_t *decay_before = calloc(c->ndecay + 1, sizeof *decay_before);
    int pid = (int)target_pid(s->target);
    if (!calls || !decay_before) {
        free(calls);
        free(decay_before);
        fprintf(stderr, "memprof: the session ended on an error and memprof ran out of "
                "memory putting back what it changed in process %d: run memprof -p %d "
                "and set it again\n", pid, pid);
        return;
    }
    size_t n = 0;
    size_t lg = c->rate.before;
    bool gdump = c->gdump.before, active = c->active.before;
    ssize_t recent = (ssize_t)c->recent.before;
    if (c->rate.changed)
        calls[n++] = (struct mallctl_call){.name = "prof.reset", .new = &lg, .newlen = sizeof lg};
    if (c->gdump.changed)
        calls[n++] = (struct mallctl_call){.name = "prof.gdump", .new = &gdump, .newlen = sizeof gdump};
    if (c->active.changed)
        calls[n++] = (struct mallctl_call){.name = "prof.active", .new = &active, .newlen = sizeof active};
    if (c->recent.changed)
        calls[n++] = (struct mallctl_call){.name = control_recent_info.name, .new = &recent,
                                           .newlen = sizeof recent};
    size_t ndecay = 0;
    for (size_t i = 0; i < c->ndecay; i++) {
        if (c->decay[i].before == c->decay[i].now)
            continue;
        decay_before[i] = (ssize_t)c->decay[i].before;
        calls[n++] = (struct mallctl_call){.name = c->decay[i].name, .new = &decay_before[i],
                                           .newlen = sizeof decay_before[i]};
        ndecay++;
    }
    char what[320];
    int len = 0;
    for (size_t i = 0; i < n - ndecay; i++) {
        char value[32];
        if (calls[i].new == &lg)
            snprintf(value, sizeof value, "2^%zu bytes (prof.lg_sample %zu)", lg, lg);
        else if (calls[i].new == &recent)
            snprintf(value, sizeof value, "%zd", recent);
        else
            snprintf(value, sizeof value, "%s", *(const bool *)calls[i].new ? "true" : "false");
        len += snprintf(what + len, sizeof what - (size_t)len, "%s%s %s",
                        i ? ", " : "", calls[i].new == &lg ? "the sampling rate" : calls[i].name,
                        value);
        if (len >= (int)sizeof what)
            len = (int)sizeof what - 1;
    }
    if (ndecay)
        snprintf(what + len, sizeof what - (size_t)len, "%s%zu decay time%s (%s %zd, ...)",
                 len ? ", " : "", ndecay, ndecay == 1 ? "" : "s", calls[n - ndecay].name,
                 *(const ssize_t *)calls[n - ndecay].new);
    bool all = control_run_calls_as(s, calls, n, &control_recent_info) == 0;
    for (size_t i = 0; all && i < n; i++)
        all = calls[i].ret == 0;
    free(calls);
    free(decay_before);
    if (all) {
        fprintf(stderr, "memprof: the session ended on an error: put back what it "
                "changed in process %d: %s, as before this session%s\n", pid, what,
                c->rate.changed ? " (setting the rate reset the profile counters)" : "");
        session_changes_clear(c);
        return;
    }
    fprintf(stderr, "memprof: the session ended on an error and could not put back "
            "what it changed in process %d (%s): run memprof -p %d and set them "
            "again\n", pid, what, pid);
}

/* The decay times that stay: one line, with the command that puts them
 * back when one does ('decay D M' sets every arena alike). */
static void decay_report(const struct session_changes *c, int pid)
{
    size_t changed = decay_changed(c);
    if (!changed)
        return;
    int64_t before[2] = {0, 0}, now[2] = {0, 0};
    bool seen[2] = {false, false}, alike = true;
    for (size_t i = 0; i < c->ndecay; i++) {
        int k = strstr(c->decay[i].name, "muzzy") != NULL;
        if (!seen[k]) {
            before[k] = c->decay[i].before;
            now[k] = c->decay[i].now;
            seen[k] = true;
        }
        alike = alike && c->decay[i].before == before[k] && c->decay[i].now == now[k];
    }
    char back[96];
    if (alike && seen[0] && seen[1])
        snprintf(back, sizeof back, "'decay -- %" PRId64 " %" PRId64 "' puts %s back",
                 before[0], before[1], changed == 1 ? "it" : "them");
    else
        snprintf(back, sizeof back, "'mallctl NAME -- VALUE' puts each back");
    fprintf(stderr, "memprof: %zu decay time%s stay%s as this session set %s in process "
            "%d (", changed, changed == 1 ? "" : "s", changed == 1 ? "s" : "",
            changed == 1 ? "it" : "them", pid);
    size_t shown = 0;
    for (size_t i = 0; i < c->ndecay && shown < 4; i++)
        if (c->decay[i].before != c->decay[i].now)
            fprintf(stderr, "%s%s %" PRId64 ", was %" PRId64, shown++ ? "; " : "",
                    c->decay[i].name, c->decay[i].now, c->decay[i].before);
    fprintf(stderr, "%s): memprof -p %d -e %s\n", changed > shown ? "; ..." : "", pid, back);
}

/* A normal end leaves the changes on purpose: say what stays and how to
 * undo it (profiling turned off needs no word: that is the tidy end). */
static void changes_report(struct session *s)
{
    struct session_changes *c = &s->changes;
    int pid = (int)target_pid(s->target);
    if (c->active.changed && c->active.now)
        fprintf(stderr, "memprof: profiling stays on in process %d (this session "
                "turned it on): memprof -p %d -e 'prof off' turns it off\n", pid, pid);
    if (c->rate.changed)
        fprintf(stderr, "memprof: process %d keeps sampling every 2^%" PRIu64 " bytes "
                "(it was 2^%" PRIu64 "): memprof -p %d -e 'prof sample %" PRIu64 "%s' "
                "puts it back\n", pid, c->rate.now, c->rate.before, pid, c->rate.before,
                s->prof_conf.opt_prof_active ? " --force" : "");
    if (c->gdump.changed)
        fprintf(stderr, "memprof: prof.gdump stays %s in process %d: memprof -p %d "
                "-e 'mallctl prof.gdump %s' puts it back\n",
                c->gdump.now ? "true" : "false", pid, pid, c->gdump.before ? "true" : "false");
    if (c->recent.changed && (ssize_t)c->recent.now != 0)
        fprintf(stderr, "memprof: process %d keeps a record of its last %zd sampled "
                "allocations (%s was %zd): memprof -p %d -e 'recent off' puts it back\n",
                pid, (ssize_t)c->recent.now, control_recent_info.name,
                (ssize_t)c->recent.before, pid);
    else if (c->recent.changed)
        fprintf(stderr, "memprof: process %d keeps no record of recent allocations (%s "
                "was %zd): memprof -p %d -e 'recent on %zd' puts it back\n", pid,
                control_recent_info.name, (ssize_t)c->recent.before, pid,
                (ssize_t)c->recent.before);
    decay_report(c, pid);
}

void control_session_end(struct session *s, bool failed)
{
    struct session_changes *c = &s->changes;
    if (!s->target || !anything_changed(c))
        return;
    /* Nothing is put back into, nor left in, a process that is gone or
     * runs another program: its settings went with it.  An exec was said
     * already ("changed nothing in the new program"). */
    enum proc_fate fate = target_fate(s->target);
    if (fate == PROC_EXITED)
        fprintf(stderr, "memprof: process %d has exited: what this session changed in "
                "it ended with it, and there is nothing to put back\n",
                (int)target_pid(s->target));
    if (fate != PROC_SAME) {
        session_changes_clear(c);
        return;
    }
    if (failed)
        changes_restore(s);
    else
        changes_report(s);
}

/* What sampling (nearly) every allocation costs, in words: the percentage
 * formula does not hold there (FIELD-NOTES 4). */
static void every_allocation_text(size_t lg, const struct mallctl_sampling_cost *cost,
                                  uint64_t live, char *buf, size_t len)
{
    char est[32] = "";
    if (cost->extra_bytes >= 0)
        analysis_format_bytes(cost->extra_bytes, false, false, est, sizeof est);
    char now[96] = "";
    if (live)
        snprintf(now, sizeof now, ": ~%s for the %" PRIu64 " live now", est, live);
    snprintf(buf, len, "%s every allocation: each one takes a backtrace in the "
             "allocating thread (a large slowdown of every allocation), and each "
             "small one is promoted to 16 KiB while it lives (up to 16 KiB more "
             "per live small allocation%s)", lg == 0 ? "rate 0 samples"
             : "this rate samples nearly", now);
}

/* The cost of sampling at 2^lg (FIELD-NOTES 4): refuse a rate that would
 * double the process's small-object memory, or sample every allocation,
 * unless forced; warn from 10 %. */
int control_sample_check(struct session *s, size_t lg, bool force)
{
    uint64_t one = 1, nmalloc = 0, ndalloc = 0;
    size_t allocated = 0, small = 0;
    char all[64], nm[64], nd[64];
    snprintf(all, sizeof all, "stats.arenas.%u.small.allocated", MALLCTL_ARENAS_ALL);
    snprintf(nm, sizeof nm, "stats.arenas.%u.small.nmalloc", MALLCTL_ARENAS_ALL);
    snprintf(nd, sizeof nd, "stats.arenas.%u.small.ndalloc", MALLCTL_ARENAS_ALL);
    struct mallctl_call calls[] = {
        {.name = "epoch", .new = &one, .newlen = sizeof one},
        {.name = "stats.allocated", .old = &allocated, .oldlen = sizeof allocated},
        {.name = all, .old = &small, .oldlen = sizeof small},
        {.name = nm, .old = &nmalloc, .oldlen = sizeof nmalloc},
        {.name = nd, .old = &ndalloc, .oldlen = sizeof ndalloc},
    };
    if (control_run_calls(s, calls, 5))
        return -1;
    /* small-object counts need --enable-stats (jemalloc-sys's `stats`) */
    bool counted = !calls[2].ret && !calls[3].ret && !calls[4].ret && nmalloc >= ndalloc;
    uint64_t live = counted ? nmalloc - ndalloc : 0;
    struct mallctl_sampling_cost cost;
    mallctl_sampling_cost(counted ? small : allocated, live, (unsigned)lg, &cost);
    if (cost.every_allocation) {
        char text[512];
        every_allocation_text(lg, &cost, live, text, sizeof text);
        if (!force) {
            say_error("%s. Use 'prof sample %zu --force' if the process can "
                          "afford it, or a rate of 15 or more", text, lg);
            return -1;
        }
        fprintf(stderr, "warning: %s\n", text);
        return 0;
    }
    if (cost.ratio < 0.1)
        return 0;
    char est[32], cur[32];
    analysis_format_bytes(cost.extra_bytes, false, false, est, sizeof est);
    analysis_format_bytes((double)(counted ? small : allocated), false, false, cur, sizeof cur);
    const char *known = counted || !calls[1].ret ? cur : "?";
    if (cost.ratio >= 1.0 && !force) {
        say_error("sampling every 2^%zu bytes could add about %.0f%% to the "
                      "process's small-object memory (~%s on %s allocated now). "
                      "Use 'prof sample %zu --force' if the process can afford it, "
                      "or a rate of 15 or more", lg, cost.ratio * 100, est, known, lg);
        return -1;
    }
    fprintf(stderr, "warning: sampling every 2^%zu bytes can add about %.0f%% to "
            "the process's small-object memory (~%s on %s allocated now)\n",
            lg, cost.ratio * 100, est, known);
    return 0;
}

/* Save a dump's bytes to a local file. */
static int save_file(const char *path, const char *data, size_t len)
{
    struct mp_error err;
    if (file_write_new(path, O_TRUNC, 0644, data, len, &err) == 0)
        return 0;
    say_error("%s", err.msg);
    return -1;
}

/* Ask the process for its profile's bytes (attach/ decides how: see
 * jemalloc_dump_profile). */
static int dump_fetch(struct session *s, char **data, size_t *len)
{
    struct jemalloc_dump_info info;
    struct mp_error err;
    if (jemalloc_dump_profile(s->target, s->dump_dir, data, len, &info, &err)) {
        if (info.mallctl_ret)
            return control_mallctl_failed(s, "prof.dump", info.mallctl_ret, true);
        say_error("%s", err.msg);
        return -1;
    }
    if (info.dir)
        say_status(s, "note: process %d dumped through the private directory %s, "
                       "removed at the end of the session (%s)\n",
                       (int)target_pid(s->target), info.dir, info.why_dir);
    return 0;
}

/* The bytes the process came to hold since profiling went on (or the
 * counters were reset): stats.allocated now, in one stop, less its value
 * then.  false when memprof cannot say (not read then, no stats). */
static bool held_growth(struct session *s, uint64_t *grown)
{
    if (!s->counting_allocated_known || s->counting_since <= 0)
        return false;
    uint64_t one = 1;
    size_t now = 0;
    struct mallctl_call calls[] = {
        {.name = "epoch", .new = &one, .newlen = sizeof one},
        {.name = "stats.allocated", .old = &now, .oldlen = sizeof now},
    };
    if (control_run_calls(s, calls, 2) || calls[0].ret || calls[1].ret)
        return false;
    *grown = now > s->counting_allocated ? now - s->counting_allocated : 0;
    return true;
}

/* An empty dump although the process came to hold `grown` bytes, n times
 * the period: say so, how likely that is by chance, and what is known to
 * cause it. */
static void explain_unsampled(struct session *s, const char *name, uint64_t grown,
                              double n, const char *every, const char *since)
{
    char held[32], chance[64];
    analysis_format_bytes((double)grown, false, false, held, sizeof held);
    if (n < 13)     /* e^13: about once in half a million */
        snprintf(chance, sizeof chance, "about once in %.0f", exp(n));
    else
        snprintf(chance, sizeof chance, "practically never (e^-%.0f)", n);
    fprintf(stderr, "note: %s holds no sample, yet jemalloc counts %s more allocated "
            "than when%s (stats.allocated, its thread caches included): %.1f times the "
            "sampling period (%s), where an empty dump happens by chance %s.  ", name,
            held, since, n, every, chance);
    /* below 8 periods, blocks filling thread caches could be most of it */
    if (n < 8) {
        fprintf(stderr, "Dump again a little later\n");
        return;
    }
    char version[64];
    jemalloc_version_text(&s->prof_conf.version, version, sizeof version);
    if (jemalloc_inactive_threads_stop_sampling(&s->prof_conf.version))
        fprintf(stderr, "The threads that allocated it are not sampled: in jemalloc "
                "%s %s; 'prof on' in a new session uses memprof's sampler\n", version,
                jemalloc_inactive_threads_text);
    else if (!s->prof_conf.version.known)
        fprintf(stderr, "The threads that allocated it are not sampled (this jemalloc "
                "does not say its version): a thread whose thread.prof.active is false "
                "is never sampled, and in jemalloc 5.2 %s\n", jemalloc_inactive_threads_text);
    else
        fprintf(stderr, "The threads that allocated it are not sampled (jemalloc %s): "
                "a thread whose thread.prof.active is false (opt.prof_thread_active_init "
                "sets it for new threads) is never sampled\n", version);
}

/* A dump without a single sample is not an answer: say what the rate in
 * force explains, what memprof knows of what the process allocated, and
 * what would get samples. */
void control_explain_empty_dump(struct session *s, const struct session_dump *d)
{
    const struct session_dump_info *p = &d->info;
    if (p->nstacks > 0 && p->total.inuse_bytes > 0)
        return;
    if (s->prof_on.off_since) {
        char when[64];
        control_since_text(s->prof_on.off_since, when, sizeof when);
        fprintf(stderr, "note: %s holds no sample: profiling was off when it was "
                "taken (this session turned it off at %s), so it holds only what was "
                "sampled before that, and none of it is still held; 'prof on' samples "
                "again\n", d->name, when);
        return;
    }
    char since[96] = "";
    if (s->counting_since > 0)
        snprintf(since, sizeof since, " memprof turned profiling on (or reset "
                 "its counters) %.1f s ago", control_monotonic_seconds() - s->counting_since);
    if (p->period <= 1) {
        fprintf(stderr, "note: %s holds no allocation although every allocation is "
                "sampled%s%s: the process holds nothing allocated since by a thread "
                "sampling at this rate (a thread moves to a new rate only after its next "
                "sample at the old one); wait longer, and check 'info' says profiling "
                "is on\n", d->name, since[0] ? ";" : "", since);
        return;
    }
    unsigned lg = 0;
    while (lg < 63 && (UINT64_C(1) << (lg + 1)) <= p->period)
        lg++;
    char every[48];
    analysis_format_bytes((double)p->period, false, false, every, sizeof every);
    char rate[64];
    snprintf(rate, sizeof rate, "2^%u bytes, %s", lg, every);
    uint64_t grown = 0;
    bool known = held_growth(s, &grown);
    if (known && grown >= p->period) {
        explain_unsampled(s, d->name, grown, (double)grown / (double)p->period, rate, since);
        return;
    }
    char what[160];
    if (known) {
        char held[32];
        analysis_format_bytes((double)grown, false, false, held, sizeof held);
        snprintf(what, sizeof what, "jemalloc counts only %s more allocated than "
                 "then (stats.allocated), less than that", held);
    } else
        snprintf(what, sizeof what, "if the process has not allocated that much (still "
                 "held) since, a dump holds nothing");
    unsigned better = lg > 16 ? 16 : lg > 0 ? lg - 1 : 0;
    fprintf(stderr, "note: %s holds no sample: jemalloc samples about one allocation "
            "per 2^%u bytes (%s) allocated;%s; %s.  Wait longer before 'dump', or "
            "sample more often with 'prof sample %u' (resets the counters; costs the "
            "process some memory)\n", d->name, lg, every,
            since[0] ? since : " this session did not turn profiling on (if "
            "'info' says it is off, 'prof on' first)", what, better);
}

static struct session_dump *keep_dump(struct session *s, struct profile *p, const char *data,
                                      size_t len, const char *name, const char *file,
                                      const char *source);

/* A dump that ended whole without MAPPED_LIBRARIES (its jemalloc could
 * not read /proc/self/maps: a chroot without /proc): the process's maps,
 * read on the host, go into p and after the dump's text, so that the
 * saved file, the session's copy and 'profile save' place and name its
 * frames (and jeprof reads it).  The dump's text with them (malloc'd), or
 * NULL with p left as it was; said either way. */
static char *add_host_maps(struct session *s, struct profile *p, const char *data,
                           size_t len, size_t *whole_len)
{
    static const char marker[] = "\nMAPPED_LIBRARIES:\n";
    pid_t pid = target_pid(s->target);
    struct mp_error err;
    char *text;
    size_t tlen;
    char *whole = NULL;
    snprintf(err.msg, sizeof err.msg, "out of memory");
    if (maps_read_text_pid(pid, &text, &tlen, &err) == 0) {
        if (maps_parse(text, tlen, false, &p->maps, &err) == 0 &&
            (whole = malloc(len + sizeof marker - 1 + tlen)) != NULL) {
            memcpy(whole, data, len);
            memcpy(whole + len, marker, sizeof marker - 1);
            memcpy(whole + len + sizeof marker - 1, text, tlen);
            *whole_len = len + sizeof marker - 1 + tlen;
        } else if (!whole)
            maps_free(&p->maps);
        free(text);
    }
    if (!whole) {
        fprintf(stderr, "warning: process %d's jemalloc wrote its dump without the list of "
                "its mappings (MAPPED_LIBRARIES: it reads /proc/self/maps, which it cannot "
                "where it runs, e.g. a chroot without /proc), and memprof could not read "
                "them on the host either (%s): its frames cannot be named\n", (int)pid,
                err.msg);
        return NULL;
    }
    p->no_maps_section = false;
    p->warning[0] = 0;
    say_status(s, "note: process %d's jemalloc wrote its dump without the list of its "
               "mappings (MAPPED_LIBRARIES: it reads /proc/self/maps, which it cannot where "
               "it runs, e.g. a chroot without /proc); memprof added the process's mappings "
               "as read on the host (/proc/%d/maps), with every stack kept\n", (int)pid,
               (int)pid);
    return whole;
}

struct session_dump *control_dump_store(struct session *s, const char *data, size_t len,
                                        const char *name, const char *file)
{
    char source[64];
    snprintf(source, sizeof source, "pid %d", (int)target_pid(s->target));
    struct mp_error err;
    struct profile *p = profile_parse(data, len, file ? file : source, &err);
    size_t whole_len = 0;
    char *whole = p && p->no_maps_section ? add_host_maps(s, p, data, len, &whole_len) : NULL;
    if (whole) {
        data = whole;
        len = whole_len;
    }
    struct session_dump *d = NULL;
    if (file && save_file(file, data, len))
        profile_free(p);
    else if (!p)
        say_error("the process wrote a profile memprof cannot read: %s", err.msg);
    else
        d = keep_dump(s, p, data, len, name, file, source);
    free(whole);
    return d;
}

/* control_dump_store's dump, parsed (p) and saved: recorded in the session. */
static struct session_dump *keep_dump(struct session *s, struct profile *p, const char *data,
                                      size_t len, const char *name, const char *file,
                                      const char *source)
{
    struct mp_error err;
    /* jemalloc copies /proc/<its pid>/maps into the dump, which reads empty
     * once the main thread has exited (pthread_exit); the live process's
     * mappings, read through a live thread, are the same. */
    struct mp_error ignored;
    bool maps_read = p->maps.n == 0;
    if (maps_read)
        maps_read_pid(target_pid(s->target), &p->maps, &ignored);
    /* The objects' build-ids now, while they are the ones the process runs,
     * so that a reading after a rebuild can tell (FILE.buildids). */
    p->taken_at = time(NULL);
    struct symbolizer *sym = session_symbolizer(s);
    if (!sym || analysis_record_objects(sym, p)) {
        profile_free(p);
        say_error("out of memory");
        return NULL;
    }
    if (file && p->nobject_ids && profile_save_object_ids(p, file, &err)) {
        fprintf(stderr, "warning: %s; a later reading of %s cannot check its "
                "objects' build-ids\n", err.msg, file);
    }
    struct session_dump *d = session_add_dump(s, p, name, source);
    if (!d) {
        profile_free(p);
        say_error("out of memory");
        return NULL;
    }
    if (file)
        d->saved_path = strdup(file);
    if (maps_read)
        session_dump_store_keep_maps(d);
    if (session_dump_keep_raw(s, d, data, len, &err))
        say_status(s, "note: %s; %s stays in memory only, and 'profile save' cannot "
                       "write it\n", err.msg, d->name);
    return d;
}

struct session_dump *control_dump_add(struct session *s, const char *data, size_t len,
                                      const char *name, const char *file)
{
    struct session_dump *d = control_dump_store(s, data, len, name, file);
    if (d && s->prof_on.since && !s->prof_on.dumped) {
        char since[64];
        control_since_text(s->prof_on.since, since, sizeof since);
        say_status(s, "note: %s covers only the allocations sampled since this "
                       "session turned profiling on at %s\n", d->name, since);
        s->prof_on.dumped = true;
    }
    return d;
}

struct session_dump *control_dump_take(struct session *s, const char *name,
                                       const char *file)
{
    char *data;
    size_t len;
    /* jemalloc refuses a dump without profiling, in 5.1 with the EFAULT of a
     * file it could not write: say the real cause, before any call */
    if (control_profiling_possible(s) || dump_fetch(s, &data, &len))
        return NULL;
    struct session_dump *d = control_dump_add(s, data, len, name, file);
    free(data);
    return d;
}