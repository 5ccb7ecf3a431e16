/* cmd_control.c - the commands that drive a live process's jemalloc:
 * attach, detach, info, jemalloc, prof, dump and mallctl.  Each builds a
 * batch of mallctl calls for the session to check and run in one stop of
 * one thread (session/control.c), and turns jemalloc's answers into
 * sentences (allocator/jemalloc/mallctl). */
#include "repl/command_table.h"
#include "session/control.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "allocator/jemalloc/mallctl.h"
#include "allocator/jemalloc/version.h"
#include "lib/analysis/analysis.h"
#include "lib/base/text_escape.h"
#include "repl/options.h"
#include "session/attach_process.h"
#include "session/control.h"
#include "session/json_answer.h"
#include "session/process_container.h"
#include "session/profile_run.h"
#include "session/sampling.h"
#include "session/sampling_notes.h"
#include "session/say.h"

/* Whether 'prof on' would put the sampler in, as known at attach (no
 * stop: filters are judged at 'prof on', or by 'info'); *proviso is the
 * words a promise needs for a process under filters not judged yet. */
static bool sampler_at_attach(struct session *s, char *why, size_t len, const char **proviso)
{
    int nfilters;
    enum sampling_verdict v = sampling_verdict(s, false, &nfilters, why, len);
    *proviso = v == SAMPLING_UNJUDGED
               ? " where the process's seccomp filters let its system calls through "
                 "(judged at 'prof on'; 'info' judges them now)" : "";
    return v != SAMPLING_NO;
}

static void state_warn(struct session *s, struct query *q)
{
    char var[64], pb[TEXT_ESCAPE_BUF];
    control_conf_var(s, var, sizeof var);
    struct query *act = control_query_find(q, CONTROL_NSTATE, "prof.active");
    struct query *ival = control_query_find(q, CONTROL_NSTATE, "opt.lg_prof_interval");
    struct query *prefix = control_query_find(q, CONTROL_NSTATE, "opt.prof_prefix");
    char no_sampler[SAMPLING_WHY_MAX];
    const char *proviso;
    bool sampler = sampler_at_attach(s, no_sampler, sizeof no_sampler, &proviso);
    if (s->prof_conf.own_profiler_blind) {
        char v[64];
        jemalloc_version_text(&s->prof_conf.version, v, sizeof v);
        if (sampler)
            say_status(s, "note: jemalloc %s's own profiler would sample nothing here if "
                       "turned on: %s; 'prof on' puts memprof's heap sampler in instead "
                       "(no restart)%s\n", v, jemalloc_inactive_threads_text, proviso);
        else
            fprintf(stderr, "warning: jemalloc %s's own profiler would sample nothing "
                    "here if turned on: %s, and memprof's sampler cannot stand in (%s): "
                    "restart it with %s=prof:true (profiling active from its start) "
                    "to profile it\n", v, jemalloc_inactive_threads_text,
                    *no_sampler ? no_sampler : control_no_sampler_for_copy(s), var);
        return;
    }
    if (!(s->prof_conf.config_prof && s->prof_conf.opt_prof) && sampler) {
        say_status(s, "note: jemalloc's own heap profiling is %s: 'prof on' puts "
                   "memprof's heap sampler in instead (no restart)%s%s\n",
                   !s->prof_conf.config_prof ? "not built in (config.prof is false)"
                   : "off for good (opt.prof was false at start)", proviso,
                   s->prof_conf.config_prof && target_secure_exec(s->target)
                   ? "; for jemalloc's own at its next start, put prof:true,"
                     "prof_active:false in /etc/malloc.conf (it runs in secure-execution "
                     "mode, where jemalloc ignores its environment)" : "");
        return;
    }
    if (!s->prof_conf.config_prof) {
        fprintf(stderr, "warning: this jemalloc was built without profiling support "
                "(config.prof is false)%s%s%s: memprof can read statistics and mallctl "
                "values, but cannot profile this process\n",
                *no_sampler ? ", and memprof's sampler cannot stand in (" : "",
                no_sampler, *no_sampler ? ")" : "");
        return;
    }
    if (!s->prof_conf.opt_prof && target_secure_exec(s->target)) {
        /* setuid, setgid, file capabilities: jemalloc ignores MALLOC_CONF */
        fprintf(stderr, "warning: heap profiling was not enabled when this process "
                "started (opt.prof is false), and jemalloc cannot enable it later. "
                "It runs in secure-execution mode (setuid, setgid or file "
                "capabilities), where jemalloc ignores %s: put "
                "prof:true,prof_active:false in /etc/malloc.conf (a symbolic link "
                "whose target is the options) or in a malloc_conf built into the "
                "program, and restart it\n", var);
        return;
    }
    if (!s->prof_conf.opt_prof) {
        fprintf(stderr, "warning: heap profiling was not enabled when this process "
                "started (opt.prof is false), and jemalloc cannot enable it later. "
                "Restart it with %s=prof:true,prof_active:false to profile it "
                "(no cost until 'prof on')\n", var);
        return;
    }
    bool active = act->ret == 0 && act->v.b;
    if (active && s->prof_conf.opt_prof_active)
        fprintf(stderr, "warning: profiling is already active in this process: its "
                "owner turned it on at start (opt.prof_active is true, from its %s "
                "or built-in malloc_conf). memprof reads and dumps, but will not "
                "turn it off, change the rate or reset the counters without "
                "--force\n", var);
    else if (active)
        fprintf(stderr, "warning: profiling is already active in this process, "
                "turned on at run time (it started with prof_active:false): by an "
                "earlier memprof session or the program itself; 'prof off' turns "
                "it off\n");
    else if (s->prof_conf.opt_prof_active)
        say_status(s, "note: this process started with profiling active "
                       "(opt.prof_active) and it has been turned off since; its owner "
                       "may rely on it: memprof changes it only with --force\n");
    if (ival->ret == 0 && ival->v.i64 >= 0)
        fprintf(stderr, "warning: this process already dumps profiles by itself "
                "every 2^%" PRId64 " bytes allocated (opt.lg_prof_interval), to "
                "files named %s.*; 'prof sample' and 'prof reset' also reset "
                "what those dumps count\n", ival->v.i64,
                prefix->ret == 0 ? text_escape(prefix->str, pb, sizeof pb) : "jeprof");
    struct query *gdump = control_query_find(q, CONTROL_NSTATE, "prof.gdump");
    if (gdump->ret == 0 && gdump->v.b)
        fprintf(stderr, "warning: prof.gdump is on in this process: while profiling is "
                "on it writes a profile file at each new high-water mark of its memory "
                "(set at its start by opt.prof_gdump, or at run time: a memprof run "
                "with --peak that was killed leaves it so); 'mallctl prof.gdump false' "
                "turns it off\n");
}

/* The profiling state as found, said on attach (a status line). */
static void state_say(struct session *s, struct query *q)
{
    struct query *act = control_query_find(q, CONTROL_NSTATE, "prof.active");
    struct query *lg = control_query_find(q, CONTROL_NSTATE, "prof.lg_sample");
    if (!s->prof_conf.opt_prof || act->ret || lg->ret)
        return;     /* the warnings say why it cannot profile */
    char every[32];
    analysis_format_bytes((double)(UINT64_C(1) << (lg->v.u64 & 63)), false, false,
                          every, sizeof every);
    say_status(s, "profiling is %s in process %d (prof.active %s); sampling every "
                   "2^%" PRIu64 " bytes (%s) on average%s\n", act->v.b ? "on" : "off",
                   (int)target_pid(s->target), act->v.b ? "true" : "false", lg->v.u64,
                   every, act->v.b ? "" : " when on");
}

static void print_copies(struct session *s, FILE *out)
{
    size_t n = jemalloc_copy_count(s->target), sel = jemalloc_selected(s->target);
    for (size_t i = 0; i < n; i++) {
        const struct jemalloc_copy *c = jemalloc_copy(s->target, i);
        char ob[TEXT_ESCAPE_BUF];
        fprintf(out, "  %c %zu: %smallctl at 0x%" PRIx64 " in %s (%s%s)\n",
                i == sel ? '*' : ' ', i, c->prefix, c->mallctl,
                text_escape(c->object, ob, sizeof ob),
                c->static_copy ? "linked in" : "shared object",
                c->dynamic ? "" : ", .symtab only");
    }
}

/* "glibc malloc in /usr/lib/.../libc.so.6" (the allocator serving malloc). */
static const char *malloc_owner_text(const struct allocator_id *a, char *buf, size_t len)
{
    char ob[TEXT_ESCAPE_BUF];
    if (!a->malloc_object[0])
        snprintf(buf, len, "%s (its malloc is in no symbol table memprof can read)",
                 allocator_kind_name(a->malloc_kind));
    else
        snprintf(buf, len, "%s in %s%s", allocator_kind_name(a->malloc_kind),
                 text_escape(a->malloc_object, ob, sizeof ob),
                 a->malloc_linked_in ? " (linked into the executable)" : "");
    return buf;
}

/* Attached to a process whose allocator is not jemalloc: say which, and
 * what memprof can do for it. */
static int attach_other(struct session *s, long pid)
{
    char eb[TEXT_ESCAPE_BUF], owner[TEXT_ESCAPE_BUF + 128];
    say_status(s, "attached to process %ld (%s): %s\n", pid,
               text_escape(target_exe(s->target), eb, sizeof eb),
               malloc_owner_text(&s->alloc, owner, sizeof owner));
    const char *why_not = allocator_why_no_stats(s->alloc.kind);
    char why[SAMPLING_WHY_MAX], text[1280];
    const char *proviso;
    if (!sampler_at_attach(s, why, sizeof why, &proviso)) {
        sampling_why_not_text(s, why, text, sizeof text);
        say_status(s, "%s work here%s%s; no heap profile without a restart: %s\n",
                   control_what_works(s->alloc.kind), why_not ? "; " : "",
                   why_not ? why_not : "", text);
    } else {
        say_status(s, "%s work here%s%s; 'prof on' puts memprof's heap sampler in "
                   "(no restart)%s, 'dump' then takes a profile\n",
                   control_what_works(s->alloc.kind), why_not ? "; " : "",
                   why_not ? why_not : "", proviso);
    }
    return 0;
}

int cmd_attach(struct session *s, int argc, char **argv)
{
    char *pos[1];
    int npos = options_words(argc, argv, pos, 1);
    if (npos < 0)
        return -1;
    if (npos != 1) {
        say_error("usage: attach PID");
        return -1;
    }
    if (s->target) {
        say_error("already attached to process %d: 'detach' first",
                      (int)target_pid(s->target));
        return -1;
    }
    char *end;
    long pid = strtol(pos[0], &end, 10);
    if (*end || end == pos[0] || pid <= 0 || pid > 0x3fffffff) {
        say_error("'%s' is not a process id", pos[0]);
        return -1;
    }
    struct mp_error err;
    if (session_attach_process(s, (pid_t)pid, &err)) {
        say_error("%s", err.msg);
        return -1;
    }
    if (s->alloc.kind != ALLOCATOR_JEMALLOC)
        return attach_other(s, pid);
    const struct jemalloc_copy *c = control_selected_copy(s);
    char eb[TEXT_ESCAPE_BUF], ob[TEXT_ESCAPE_BUF], sb[TEXT_ESCAPE_BUF];
    say_status(s, "attached to process %ld (%s): %smallctl in %s%s%s%s\n", pid,
            text_escape(target_exe(s->target), eb, sizeof eb), c->prefix,
            text_escape(c->object, ob, sizeof ob),
            c->symbols_from ? " (symbols from " : "",
            c->symbols_from ? text_escape(c->symbols_from, sb, sizeof sb) : "",
            c->symbols_from ? ")" : "");
    if (s->alloc.malloc_kind != ALLOCATOR_JEMALLOC) {
        char owner[TEXT_ESCAPE_BUF + 128];
        say_status(s, "its malloc() is %s: this jemalloc serves only what the program "
                   "allocates through it\n", malloc_owner_text(&s->alloc, owner, sizeof owner));
    }
    if (jemalloc_copy_count(s->target) > 1) {
        say_status(s, "this process holds %zu copies of jemalloc; using the one "
                       "marked '*' ('jemalloc N' picks another):\n",
                       jemalloc_copy_count(s->target));
        if (!s->quiet)
            print_copies(s, stderr);
    }
    struct query q[CONTROL_NSTATE];
    if (control_state_read(s, q))
        return -1;
    state_say(s, q);
    state_warn(s, q);
    return 0;
}

int cmd_detach(struct session *s, int argc, char **argv)
{
    if (options_words(argc, argv, NULL, 0) < 0)
        return -1;
    pid_t pid = target_pid(s->target);
    session_detach_process(s, "detach", false);
    fprintf(s->out, "detached from process %d\n", (int)pid);
    return 0;
}

int cmd_jemalloc(struct session *s, int argc, char **argv)
{
    char *pos[1];
    int npos = options_words(argc, argv, pos, 1);
    if (npos < 0)
        return -1;
    if (npos == 0) {
        print_copies(s, s->out);
        return 0;
    }
    if (control_run_owns_profiling(s, "jemalloc"))      /* it would restore another copy */
        return -1;
    char *end;
    unsigned long i = strtoul(pos[0], &end, 10);
    struct mp_error err;
    if (*end || end == pos[0] || pos[0][0] == '-') {
        say_error("usage: jemalloc [N]");
        return -1;
    }
    size_t before = jemalloc_selected(s->target);
    if (jemalloc_select(s->target, i, &err)) {
        say_error("%s", err.msg);
        return -1;
    }
    if (i != before) {
        /* What was changed belongs to the other copy: say what stays there
         * and start afresh with this one. */
        size_t now = jemalloc_selected(s->target);
        jemalloc_select(s->target, before, &err);
        control_session_end(s, false);
        jemalloc_select(s->target, now, &err);
        session_changes_clear(&s->changes);
        s->prof_on = (struct session_prof_on){0};
        s->prof_conf = (struct session_prof_conf){0};   /* read again for this copy */
    }
    print_copies(s, s->out);
    return 0;
}

static json_object *allocator_json(struct session *s, const struct allocator_id *a)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "name", json_object_new_string(allocator_kind_key(a->kind)));
    json_object_object_add(o, "malloc", json_object_new_string(allocator_kind_key(a->malloc_kind)));
    json_object_object_add(o, "malloc_object", a->malloc_object[0]
                           ? json_object_new_string(a->malloc_object) : NULL);
    json_object_object_add(o, "malloc_linked_in", json_object_new_boolean(a->malloc_linked_in));
    json_object_object_add(o, "stats", json_object_new_boolean(allocator_has_stats(a->kind)));
    json_object_object_add(o, "purge", json_object_new_boolean(allocator_has_purge(a->kind)));
    char why[SAMPLING_WHY_MAX];
    int nfilters;
    /* a jemalloc without its own profiler gets the sampler too; judged as
     * 'prof on' would, its seccomp filters included */
    bool sampled = sampling_applies(s);
    bool sampler = sampling_verdict(s, true, &nfilters, why, sizeof why) == SAMPLING_YES;
    json_object_object_add(o, "heap_profiling",
                           json_object_new_boolean(a->kind == ALLOCATOR_JEMALLOC || sampler));
    if (sampled) {
        json_object *sm = json_object_new_object();
        json_object_object_add(sm, "possible", json_object_new_boolean(sampler));
        json_object_object_add(sm, "why_not", sampler ? NULL : json_object_new_string(why));
        json_object_object_add(sm, "seccomp_filters", nfilters >= 0
                               ? json_object_new_int(nfilters) : NULL);
        json_object_object_add(sm, "on", json_object_new_boolean(sampler_is_on(s->sampler)));
        json_object_object_add(sm, "lg_sample",
                               json_object_new_uint64(sampler_lg_sample(s->sampler)));
        int64_t from = sampler_inherited_from(s->sampler);
        json_object_object_add(sm, "inherited_from",
                               from ? json_object_new_int64(from) : NULL);
        json_object_object_add(o, "sampler", sm);
    }
    return o;
}

static json_object *pauses_json(struct session *s)
{
    const struct target_pause_stats *ps = target_pauses(s->target);
    json_object *p = json_object_new_object();
    json_object_object_add(p, "stops", json_object_new_int64(ps->calls));
    json_object_object_add(p, "last_us", json_object_new_int64(llround(ps->last_us)));
    json_object_object_add(p, "last_thread", json_object_new_int((int)ps->last_tid));
    json_object_object_add(p, "median_us", json_object_new_int64(llround(ps->median_us)));
    json_object_object_add(p, "p90_us", json_object_new_int64(llround(ps->p90_us)));
    json_object_object_add(p, "max_us", json_object_new_int64(llround(ps->max_us)));
    json_object_object_add(p, "unsafe_threads_skipped", json_object_new_int64(ps->unsafe_retries));
    const char *not_raised = target_stop_priority(s->target);
    json_object_object_add(p, "priority_raised", json_object_new_boolean(!not_raised));
    json_object_object_add(p, "priority_not_raised_because",
                           not_raised ? json_object_new_string(not_raised) : NULL);
    const char *asleep = target_stop_cpus_asleep(s->target);
    json_object_object_add(p, "cpus_kept_awake", json_object_new_boolean(!not_raised && !asleep));
    json_object_object_add(p, "cpus_not_kept_awake_because",
                           not_raised ? json_object_new_string("the priority is not raised")
                           : asleep ? json_object_new_string(asleep) : NULL);
    return p;
}

static void pauses_text(struct session *s)
{
    const struct target_pause_stats *ps = target_pauses(s->target);
    fprintf(s->out, "pauses               %u stops of one thread: last %.0f us (thread %d), "
            "median %.0f us, p90 %.0f us, max %.0f us; %u unsafe threads skipped\n",
            ps->calls, ps->last_us, (int)ps->last_tid, ps->median_us, ps->p90_us,
            ps->max_us, ps->unsafe_retries);
    const char *not_raised = target_stop_priority(s->target);
    const char *asleep = target_stop_cpus_asleep(s->target);
    if (not_raised)
        fprintf(s->out, "stop priority        not raised: %s\n", not_raised);
    else
        fprintf(s->out, "stop priority        memprof runs at SCHED_RR 1, on the borrowed "
                "thread's CPU%s, during each stop%s%s\n",
                asleep ? "" : ", with every CPU kept out of deep idle states",
                asleep ? "; CPUs not kept awake: " : "", asleep ? asleep : "");
}

/* The process's cgroup, container, pod and namespace pid, under its pid
 * (from /proc: nothing is called in the process). */
static void info_container(struct session *s, json_object *j)
{
    char dir[96];
    struct process_container *c = malloc(sizeof *c);
    if (!c)
        return;
    target_proc_dir(s->target, dir, sizeof dir);
    process_container_read(dir, c);
    if (j)
        process_container_json(j, c);
    else
        process_container_text(s->out, c);
    free(c);
}

/* info for a process whose allocator is not jemalloc: nothing is called. */
static int info_other(struct session *s, bool json)
{
    const struct allocator_id *a = &s->alloc;
    if (json) {
        json_object *j = json_answer_new();
        json_object_object_add(j, "pid", json_object_new_int((int)target_pid(s->target)));
        info_container(s, j);
        json_object_object_add(j, "executable", json_object_new_string(target_exe(s->target)));
        json_object_object_add(j, "threads", json_object_new_int(target_thread_count(s->target)));
        json_object_object_add(j, "allocator", allocator_json(s, a));
        json_object_object_add(j, "pauses", pauses_json(s));
        return json_answer_emit(s, j);
    }
    char eb[TEXT_ESCAPE_BUF], owner[TEXT_ESCAPE_BUF + 128];
    fprintf(s->out, "pid                  %d\n", (int)target_pid(s->target));
    info_container(s, NULL);
    fprintf(s->out, "executable           %s\n", text_escape(target_exe(s->target), eb, sizeof eb));
    fprintf(s->out, "threads              %d\n", target_thread_count(s->target));
    fprintf(s->out, "allocator            %s\n", malloc_owner_text(a, owner, sizeof owner));
    fprintf(s->out, "  memprof can        %s\n", allocator_has_stats(a->kind)
            ? "show its statistics ('stats', 'memory') and purge it ('purge')"
            : "show the process's memory ('memory')");
    char why[SAMPLING_WHY_MAX], state[512], text[1280];
    int nfilters;
    if (sampling_verdict(s, true, &nfilters, why, sizeof why) != SAMPLING_YES) {
        sampling_why_not_text(s, why, text, sizeof text);
        fprintf(s->out, "  heap profiling     not possible without a restart: %s\n", text);
    }
    else {
        sampling_state_text(s, state, sizeof state);
        fprintf(s->out, "  heap profiling     memprof's sampler ('prof on' puts it in): %s%s\n",
                state, nfilters > 0 ? "; the process's seccomp filters, read and judged, "
                "let the sampler's system calls through" : "");
    }
    pauses_text(s);
    return 0;
}

/* What serves 'prof on' in this jemalloc process: "jemalloc",
 * "memprof-sampler", or NULL with why (where neither can). */
static const char *prof_on_by(struct session *s, char *why, size_t len)
{
    why[0] = 0;
    if (!sampling_applies(s) && s->prof_conf.own_profiler_blind) {
        char v[64];
        jemalloc_version_text(&s->prof_conf.version, v, sizeof v);
        snprintf(why, len, "in jemalloc %s, %s; and memprof's sampler cannot stand in "
                 "(%s)", v, jemalloc_inactive_threads_text, control_no_sampler_for_copy(s));
        return NULL;
    }
    if (!sampling_applies(s)) {
        if (s->prof_conf.config_prof && s->prof_conf.opt_prof)
            return "jemalloc";
        snprintf(why, len, "profiling was not enabled at the process's start");
        return NULL;
    }
    int nfilters;
    if (sampling_verdict(s, true, &nfilters, why, len) == SAMPLING_YES)
        return "memprof-sampler";
    return NULL;
}

/* A 5.3-only name by version: true, false, or unknown (-1). */
static int since_53(const struct jemalloc_version *v,
                    bool (*has)(const struct jemalloc_version *))
{
    return v->known ? has(v) : -1;
}

static void since_53_line(const char *what, int has, const char *name,
                          const char *version, FILE *out)
{
    if (has < 0)
        fprintf(out, "  %-18s %s (jemalloc 5.3.0 and later), tried: this jemalloc's "
                "version is unknown\n", what, name);
    else if (has)
        fprintf(out, "  %-18s %s (jemalloc 5.3.0 and later)\n", what, name);
    else
        fprintf(out, "  %-18s not in jemalloc %s (%s came with jemalloc 5.3.0)\n",
                what, version, name);
}

/* info: each behaviour that depends on jemalloc's version, a line each. */
static void version_lines(struct session *s)
{
    const struct jemalloc_version *v = &s->prof_conf.version;
    char version[64], why[768];
    jemalloc_version_text(v, version, sizeof version);
    const char *by = prof_on_by(s, why, sizeof why);
    if (by && strcmp(by, "jemalloc") == 0 && jemalloc_inactive_threads_stop_sampling(v))
        fprintf(s->out, "  'prof on' uses     jemalloc's own profiler (on since the "
                "process's start); in jemalloc %s, once turned off, %s\n", version,
                jemalloc_inactive_threads_text);
    else if (by && strcmp(by, "jemalloc") == 0)
        fprintf(s->out, "  'prof on' uses     jemalloc's own profiler (prof.active)\n");
    else if (by) {
        sampling_reason(s, why, sizeof why);
        fprintf(s->out, "  'prof on' uses     memprof's heap sampler: %s\n", why);
    } else
        fprintf(s->out, "  'prof on' uses     nothing without a restart: %s\n", why);
    if (jemalloc_small_sizes_read_high(v))
        fprintf(s->out, "  jemalloc's sizes   of small allocations read high: in jemalloc %s "
                "one that misses its thread cache counts twice toward the next sample (by "
                "10-15%% in memprof's tests; fixed in 5.3.0); memprof's sampler's do not\n",
                version);
    else
        fprintf(s->out, "  jemalloc's sizes   as sampled, at the rate in force\n");
    since_53_line("'recent'", since_53(v, jemalloc_has_prof_recent),
                  "experimental.prof_recent", version, s->out);
    since_53_line("'profile --peak'", since_53(v, jemalloc_has_prof_prefix),
                  "prof.prefix", version, s->out);
}

static json_object *tri_json(int v)
{
    return v < 0 ? NULL : json_object_new_boolean(v);
}

/* info --json's "jemalloc" keys for the same facts (docs/memprof.1). */
static void version_json(struct session *s, json_object *je)
{
    const struct jemalloc_version *v = &s->prof_conf.version;
    json_object *jv = NULL;
    if (v->known) {
        jv = json_object_new_object();
        json_object_object_add(jv, "major", json_object_new_int((int)v->major));
        json_object_object_add(jv, "minor", json_object_new_int((int)v->minor));
        json_object_object_add(jv, "patch", json_object_new_int((int)v->patch));
        json_object_object_add(jv, "commits", json_object_new_uint64(v->commits));
    }
    json_object_object_add(je, "version", jv);
    char why[768];
    const char *by = prof_on_by(s, why, sizeof why);
    json_object_object_add(je, "prof_on_by", by ? json_object_new_string(by) : NULL);
    if (by && strcmp(by, "memprof-sampler") == 0)
        sampling_reason(s, why, sizeof why);
    json_object_object_add(je, "prof_on_why", by && strcmp(by, "jemalloc") == 0 ? NULL
                           : json_object_new_string(why));
    json_object_object_add(je, "inactive_threads_stop_sampling",
                           json_object_new_boolean(jemalloc_inactive_threads_stop_sampling(v)));
    json_object_object_add(je, "small_sizes_read_high",
                           json_object_new_boolean(jemalloc_small_sizes_read_high(v)));
    json_object_object_add(je, "recent", tri_json(since_53(v, jemalloc_has_prof_recent)));
    json_object_object_add(je, "prof_prefix", tri_json(since_53(v, jemalloc_has_prof_prefix)));
}

/* info --json: the same facts under stable keys (docs/memprof.1). */
static int info_json(struct session *s, const char *refused, struct query *q)
{
    json_object *j = json_answer_new();
    json_object_object_add(j, "pid", json_object_new_int((int)target_pid(s->target)));
    info_container(s, j);
    if (refused) {
        json_object_object_add(j, "calls_refused", json_object_new_string(refused));
        return json_answer_emit(s, j);
    }
    const struct jemalloc_copy *c = control_selected_copy(s);
    json_object_object_add(j, "executable", json_object_new_string(target_exe(s->target)));
    json_object_object_add(j, "threads", json_object_new_int(target_thread_count(s->target)));
    json_object *je = json_object_new_object();
    json_object_object_add(je, "object", json_object_new_string(c->object));
    json_object_object_add(je, "linked_in", json_object_new_boolean(c->static_copy));
    json_object_object_add(je, "prefix", json_object_new_string(c->prefix));
    json_object_object_add(je, "mallctl_address", json_object_new_uint64(c->mallctl));
    json_object_object_add(je, "symtab_only", json_object_new_boolean(!c->dynamic));
    version_json(s, je);
    json_object_object_add(j, "jemalloc", je);
    json_object_object_add(j, "allocator", allocator_json(s, &s->alloc));
    json_object *m = json_object_new_object();
    for (size_t i = 0; i < CONTROL_NSTATE; i++) {
        const struct mallctl_info *mi = mallctl_lookup(q[i].name);
        json_object_object_add(m, q[i].name, q[i].ret != 0 || !mi ? NULL :
                               json_mallctl_value(mi->type, &q[i].v, q[i].str));
    }
    json_object_object_add(j, "mallctl", m);
    json_object_object_add(j, "prof_active_since", s->prof_on.since
                           ? json_object_new_int64((int64_t)s->prof_on.since) : NULL);
    json_object *p = pauses_json(s);
    json_object_object_add(j, "pauses", p);
    json_object_object_add(j, "entry_point_kept", json_object_new_boolean(target_entry_kept(s->target)));
    json_object_object_add(j, "seccomp_suspended",
                           json_object_new_boolean(target_seccomp_suspended(s->target)));
    return json_answer_emit(s, j);
}

int cmd_info(struct session *s, int argc, char **argv)
{
    struct cmd_option opts[] = {{"json", false, false, NULL}, {NULL, false, false, NULL}};
    if (options_parse(argc, argv, opts, NULL, 0) < 0)
        return -1;
    bool json = opts[0].given;
    const char *refused = target_calls_refused(s->target);
    if (json && refused)
        return info_json(s, refused, NULL);
    if (refused) {
        fprintf(s->out, "pid                  %d\n", (int)target_pid(s->target));
        info_container(s, NULL);
        fprintf(s->out, "calls                refused: %s\n", refused);
        return 0;
    }
    if (s->alloc.kind != ALLOCATOR_JEMALLOC)
        return info_other(s, json);
    struct query q[CONTROL_NSTATE];
    if (control_state_read(s, q))
        return -1;
    if (json)
        return info_json(s, NULL, q);
    const struct jemalloc_copy *c = control_selected_copy(s);
    char buf[64];
    fprintf(s->out, "pid                  %d\n", (int)target_pid(s->target));
    info_container(s, NULL);
    char eb[TEXT_ESCAPE_BUF];
    fprintf(s->out, "executable           %s\n", text_escape(target_exe(s->target), eb, sizeof eb));
    fprintf(s->out, "threads              %d\n", target_thread_count(s->target));
    fprintf(s->out, "jemalloc             %s\n", control_query_text(&q[0], buf, sizeof buf));
    fprintf(s->out, "  found in           %s (%s)\n", text_escape(c->object, eb, sizeof eb),
            c->static_copy ? "linked into the executable" : "shared object");
    fprintf(s->out, "  symbol             %smallctl at 0x%" PRIx64 " (prefix '%s'%s)\n",
            c->prefix, c->mallctl, c->prefix, c->dynamic ? "" : ", .symtab only");
    version_lines(s);
    for (size_t i = 1; i < CONTROL_NSTATE; i++) {
        fprintf(s->out, "%-20s %s", q[i].name, control_query_text(&q[i], buf, sizeof buf));
        if (strcmp(q[i].name, "prof.active") == 0 && s->prof_on.since && q[i].ret == 0 &&
            q[i].v.b) {
            char since[64];
            control_since_text(s->prof_on.since, since, sizeof since);
            fprintf(s->out, " (turned on by this session at %s)", since);
        }
        fputc('\n', s->out);
    }
    pauses_text(s);
    fprintf(s->out, "entry point          %s\n", target_entry_kept(s->target)
            ? "holds the call trampoline an earlier memprof left (it died while a "
              "thread was in a call); this session uses it and leaves it"
            : "the executable's own bytes, between stops");
    fprintf(s->out, "seccomp filter       %s\n", target_seccomp_suspended(s->target)
            ? "suspended for the thread memprof held during each call "
              "(PTRACE_O_SUSPEND_SECCOMP)"
            : "not suspended so far");
    return 0;
}

/* ---- prof ---- */

/* prof --json: {"schema", "prof_active"[, "was"] | "reset"[, "lg_sample"]} */
static int prof_json(struct session *s, const char *key, bool value, const char *key2,
                     json_object *value2)
{
    json_object *j = json_answer_new();
    json_object_object_add(j, key, json_object_new_boolean(value));
    if (key2)
        json_object_object_add(j, key2, value2);
    return json_answer_emit(s, j);
}

/* Write a bool to prof.active, reading the old value in the same call. */
static int prof_set_active(struct session *s, bool on, bool json)
{
    bool old = false;
    uint64_t one = 1;
    size_t allocated = 0;
    /* stats.allocated in the same stop: what the process holds as sampling
     * starts, for the note on an empty dump */
    struct mallctl_call calls[] = {
        {.name = "prof.active", .old = &old, .oldlen = sizeof old,
         .new = &on, .newlen = sizeof on},
        {.name = "epoch", .new = &one, .newlen = sizeof one},
        {.name = "stats.allocated", .old = &allocated, .oldlen = sizeof allocated},
    };
    if (control_run_calls(s, calls, 3))
        return -1;
    if (calls[0].ret)
        return control_mallctl_failed(s, "prof.active", calls[0].ret, true);
    control_note_change(&s->changes.active, old, on);
    if (on != old) {
        control_note_counting(s, on);
        control_note_allocated(s, calls[1].ret ? calls[1].ret : calls[2].ret, allocated);
    }
    control_prof_on_note(s, old, on);
    if (!on && old && jemalloc_inactive_threads_stop_sampling(&s->prof_conf.version)) {
        char v[64];
        jemalloc_version_text(&s->prof_conf.version, v, sizeof v);
        s->prof_conf.own_profiler_blind = true;
        fprintf(stderr, "warning: in jemalloc %s, %s: jemalloc's own profiler will not "
                "sample this process's threads again; a later 'prof on' puts memprof's "
                "heap sampler in instead\n", v, jemalloc_inactive_threads_text);
    }
    if (json)
        return prof_json(s, "prof_active", on, "was", json_object_new_boolean(old));
    fprintf(s->out, "profiling is now %s (was %s)\n", on ? "on" : "off", old ? "on" : "off");
    return 0;
}

/* prof.reset, with a new lg_sample or keeping the current one; the rate
 * before is read in the same stop. */
static int prof_reset(struct session *s, const size_t *lg_sample)
{
    size_t before = 0;
    uint64_t one = 1;
    size_t allocated = 0;
    struct mallctl_call calls[] = {
        {.name = "prof.lg_sample", .old = &before, .oldlen = sizeof before},
        {.name = "prof.reset", .new = lg_sample, .newlen = lg_sample ? sizeof *lg_sample : 0},
        {.name = "epoch", .new = &one, .newlen = sizeof one},
        {.name = "stats.allocated", .old = &allocated, .oldlen = sizeof allocated},
    };
    if (control_run_calls(s, calls, 4))
        return -1;
    if (calls[1].ret)
        return control_mallctl_failed(s, "prof.reset", calls[1].ret, true);
    if (lg_sample && calls[0].ret == 0)
        control_note_change(&s->changes.rate, before, *lg_sample);
    control_note_counting(s, true);
    control_note_allocated(s, calls[2].ret ? calls[2].ret : calls[3].ret, allocated);
    return 0;
}

/* The rate N of 'prof sample N' (0..62), or -1 after saying why. */
static long sample_rate_arg(const char *arg)
{
    char *end;
    unsigned long lg = strtoul(arg, &end, 10);
    if (*end || end == arg || arg[0] == '-' || lg > 62) {
        say_error("'%s' is not a sample rate: give N from 0 to 62, meaning "
                      "one sample every 2^N bytes on average (default 19)", arg);
        return -1;
    }
    return (long)lg;
}

/* 'prof' in a process profiled by memprof's own sampler. */
static int prof_sampler(struct session *s, bool on, bool off, bool reset, const char *rate,
                        bool json)
{
    if (control_run_owns_profiling(s, "prof"))
        return -1;
    if (on)
        return sampling_prof_on(s, json);
    if (off)
        return sampling_prof_off(s, json);
    if (reset)
        return sampling_prof_reset(s, json);
    long lg = sample_rate_arg(rate);
    return lg < 0 ? -1 : sampling_prof_rate(s, (unsigned)lg, json);
}

int cmd_prof(struct session *s, int argc, char **argv)
{
    const char *usage = "usage: prof on|off|sample N|reset [--force] [--json]";
    struct cmd_option opts[] = {
        {"force", false, false, NULL}, {"json", false, false, NULL}, {NULL, false, false, NULL},
    };
    char *pos[2];
    int npos = options_parse(argc, argv, opts, pos, 2);
    if (npos < 0)
        return -1;
    bool force = opts[0].given, json = opts[1].given;
    const char *sub = npos ? pos[0] : "";
    bool on = strcmp(sub, "on") == 0, off = strcmp(sub, "off") == 0;
    bool reset = strcmp(sub, "reset") == 0, sample = strcmp(sub, "sample") == 0;
    if (!(((on || off || reset) && npos == 1) || (sample && npos == 2))) {
        say_error("%s", usage);
        return -1;
    }
    if (sampling_applies(s))
        return prof_sampler(s, on, off, reset, sample ? pos[1] : NULL, json);
    if (control_profiling_possible(s) || control_run_owns_profiling(s, "prof"))
        return -1;
    if (on)
        return control_own_profiler_sees(s, "prof on") ? -1 : prof_set_active(s, true, json);
    if (off)
        return control_owner_allows(s, "turn it off", force) ? -1 : prof_set_active(s, false, json);
    if (reset) {
        if (control_owner_allows(s, "reset its counters", force) || prof_reset(s, NULL))
            return -1;
        if (json)
            return prof_json(s, "reset", true, NULL, NULL);
        fprintf(s->out, "profile counters reset\n");
        return 0;
    }
    long lg = sample_rate_arg(pos[1]);
    if (lg < 0)
        return -1;
    size_t lgs = (size_t)lg;
    if (control_owner_allows(s, "change its sampling rate (and reset its counters)", force) ||
        control_sample_check(s, lgs, force) || prof_reset(s, &lgs))
        return -1;
    if (json)
        return prof_json(s, "reset", true, "lg_sample", json_object_new_uint64(lg));
    char every[32];
    analysis_format_bytes((double)(UINT64_C(1) << lg), false, false, every, sizeof every);
    fprintf(s->out, "counters reset; sampling every 2^%ld bytes (%s) on average\n",
            lg, every);
    return 0;
}

int cmd_dump(struct session *s, int argc, char **argv)
{
    struct cmd_option opts[] = {
        {"name", true, false, NULL}, {"json", false, false, NULL}, {NULL, false, false, NULL},
    };
    char *pos[1];
    int npos = options_parse(argc, argv, opts, pos, 1);
    if (npos < 0)
        return -1;
    const char *file = npos ? pos[0] : NULL, *name = opts[0].value;
    bool sampled = sampling_applies(s), first = !s->prof_on.dumped;
    struct session_dump *d = sampled ? sampling_dump(s, name, file)
                                     : control_dump_take(s, name, file);
    if (!d)
        return -1;
    if (opts[1].given) {
        json_object *j = json_answer_new();
        json_object_object_add(j, "dump", json_dump(d));
        return json_answer_emit(s, j);
    }
    char total[32];
    const struct session_dump_info *p = &d->info;
    analysis_format_bytes(p->total.inuse_bytes, false, false, total, sizeof total);
    fprintf(s->out, "%s: %zu stacks, %s in use%s%s\n", d->name, p->nstacks, total,
            file ? ", saved to " : "", file ? file : "");
    if (!sampled)
        control_explain_empty_dump(s, d);
    else
        sampling_dump_notes(s, d, &s->sampler_dumped, first);
    return 0;
}

static int mallctl_list_json(struct session *s)
{
    json_object *j = json_answer_new(), *arr = json_object_new_array();
    json_object_object_add(j, "source", json_object_new_string(mallctl_table_source));
    for (const struct mallctl_info *m = mallctl_table; m->name; m++) {
        json_object *o = json_object_new_object();
        json_object_object_add(o, "name", json_object_new_string(m->name));
        json_object_object_add(o, "type", json_object_new_string(mallctl_type_name(m->type)));
        json_object_object_add(o, "access", json_object_new_string(mallctl_access_name(m->access)));
        json_object_object_add(o, "doc", json_object_new_string(m->doc));
        json_object_array_add(arr, o);
    }
    json_object_object_add(j, "names", arr);
    return json_answer_emit(s, j);
}

static void mallctl_list(struct session *s)
{
    fprintf(s->out, "mallctl names of %s (jemalloc(3); access as the page writes "
            "it: r- read, -w write, rw both, 'r- or -w' one of them per call, -- an "
            "action):\n", mallctl_table_source);
    for (const struct mallctl_info *m = mallctl_table; m->name; m++)
        fprintf(s->out, "  %-44s %-9s %-8s %s\n", m->name, mallctl_type_name(m->type),
                mallctl_access_name(m->access), m->doc);
}

/* Why a name without a value is refused when its only use is a write:
 * the dedicated command, or the value form. */
static int refuse_bare_write(const char *name, const struct mallctl_info *info)
{
    if (strcmp(name, "prof.dump") == 0)
        say_error("'mallctl prof.dump' without a value would make the process "
                      "write a profile into its working directory: use 'dump' (or "
                      "'mallctl prof.dump PATH' for a file of your choosing in the "
                      "process's filesystem)");
    else if (strcmp(name, "prof.reset") == 0)
        say_error("'mallctl prof.reset' without a value would reset the profile "
                      "counters: use 'prof reset' (or 'prof sample N' to change the "
                      "rate too)");
    else
        say_error("%s is write-only: jemalloc has nothing to read there; write it "
                      "with 'mallctl %s VALUE' (a %s; a value starting with '-' goes "
                      "after '--')", name, name, mallctl_type_name(info->write_type));
    return -1;
}

/* prof.active where jemalloc's own profiler cannot run but memprof's
 * sampler stands in: say both, so that the way that works now comes
 * first. */
static int refuse_jemalloc_prof_active(struct session *s)
{
    char how[1536], restart[512];
    sampling_how_to_profile(s, how, sizeof how);
    sampling_restart_advice(s, restart, sizeof restart);
    say_error("prof.active: jemalloc's own heap profiling %s in process %d, so "
              "prof.active cannot turn it on. %s; for jemalloc's own profiler, %s",
              s->prof_conf.config_prof ? "was not enabled at its start (opt.prof is false)"
                                       : "is not built in (config.prof is false)",
              (int)target_pid(s->target), how, restart);
    return -1;
}

/* The MALLOC_CONF rule for the names it covers. */
static int mallctl_owner_allows(struct session *s, const char *name, const void *newv,
                                bool force)
{
    static const char *const run_owned[] = {
        "prof.active", "prof.reset", "prof.gdump", "prof.prefix",
    };
    for (size_t i = 0; i < sizeof run_owned / sizeof run_owned[0]; i++)
        if (strcmp(name, run_owned[i]) == 0 && control_run_owns_profiling(s, "mallctl"))
            return -1;
    if (strcmp(name, "prof.reset") == 0)
        return control_owner_allows(s, "reset its counters or change its rate", force);
    if (strcmp(name, "prof.active") == 0 && !*(const bool *)newv)
        return control_owner_allows(s, "turn it off", force);
    /* as 'prof on': jemalloc 5.1 takes it without opt.prof, samples nothing */
    /* where 'prof on' uses memprof's sampler, a jemalloc 5.2 aside (its
     * profiler may still be wanted, with the warning below) */
    if (strcmp(name, "prof.active") == 0 && sampling_applies(s) &&
        !s->prof_conf.own_profiler_blind)
        return refuse_jemalloc_prof_active(s);
    if (strcmp(name, "prof.active") == 0 && control_profiling_possible(s))
        return -1;
    if (strcmp(name, "prof.active") == 0 && s->prof_conf.own_profiler_blind) {
        char v[64];
        jemalloc_version_text(&s->prof_conf.version, v, sizeof v);
        fprintf(stderr, "warning: in jemalloc %s, %s: prof.active on samples nothing of "
                "the threads that ran with it off ('prof on' uses memprof's sampler "
                "where it can)\n", v, jemalloc_inactive_threads_text);
    }
    return 0;
}

/* arenas.dirty_decay_ms, arena.<i>.muzzy_decay_ms and their kind. */
static bool is_decay_time(const char *name)
{
    size_t len = strlen(name);
    return (strncmp(name, "arena.", 6) == 0 || strncmp(name, "arenas.", 7) == 0) &&
           ((len > 15 && strcmp(name + len - 15, ".dirty_decay_ms") == 0) ||
            (len > 15 && strcmp(name + len - 15, ".muzzy_decay_ms") == 0));
}

/* Keep track of what a write through mallctl changed. */
static void mallctl_note_change(struct session *s, const char *name, const void *oldv,
                                const void *newv, const size_t *lg_before, int lg_ret)
{
    if (strcmp(name, "prof.active") == 0) {
        control_note_change(&s->changes.active, *(const bool *)oldv, *(const bool *)newv);
        if (*(const bool *)oldv != *(const bool *)newv)
            control_note_counting(s, *(const bool *)newv);
        control_prof_on_note(s, *(const bool *)oldv, *(const bool *)newv);
    } else if (strcmp(name, "prof.gdump") == 0)
        control_note_change(&s->changes.gdump, *(const bool *)oldv, *(const bool *)newv);
    else if (strcmp(name, "prof.reset") == 0 && lg_ret == 0)
        control_note_change(&s->changes.rate, *lg_before, *(const size_t *)newv);
    else if (is_decay_time(name))
        control_note_decay(s, name, *(const int64_t *)oldv, *(const int64_t *)newv);
    if (strcmp(name, "prof.reset") == 0)
        control_note_counting(s, true);
}

/* mallctl [NAME [VALUE]] [--type TYPE] [--force] */
int cmd_mallctl(struct session *s, int argc, char **argv)
{
    struct cmd_option opts[] = {
        {"type", true, false, NULL}, {"force", false, false, NULL},
        {"json", false, false, NULL}, {NULL, false, false, NULL},
    };
    char *pos[2];
    int npos = options_parse(argc, argv, opts, pos, 2);
    if (npos < 0)
        return -1;
    const char *name = npos > 0 ? pos[0] : NULL, *value = npos > 1 ? pos[1] : NULL;
    const char *type = opts[0].value;
    bool force = opts[1].given, json = opts[2].given;
    if (!name && json)
        return mallctl_list_json(s);
    if (!name) {
        mallctl_list(s);
        return 0;
    }
    if (!s->target) {
        say_error("'mallctl %s' needs a process: attach to one first", name);
        return -1;
    }
    struct mp_error err;
    const struct mallctl_info *info = mallctl_lookup(name);
    struct mallctl_info guessed;
    enum mallctl_type t;
    if (type && mallctl_type_parse(type, &t, &err)) {
        say_error("%s", err.msg);
        return -1;
    }
    if (info && type && t != info->type && t != info->write_type) {
        say_error("%s has type %s (jemalloc(3)), not %s: leave --type out", name,
                      mallctl_type_name(info->type), type);
        return -1;
    }
    if (!info && !type) {
        say_error("memprof does not know the type of '%s' (it is not in %s's "
                      "jemalloc(3)): give it with --type bool|unsigned|uint32_t|size_t|"
                      "ssize_t|uint64_t|int64_t|string|void", name, mallctl_table_source);
        return -1;
    }
    if (!info) {
        /* A name newer than the table: read without a value, write with one,
         * run as an action for void; never a call that needs a value without one. */
        guessed = (struct mallctl_info){
            .name = name, .type = t, .write_type = t,
            .access = t == MALLCTL_VOID ? MALLCTL_ACTION : value ? MALLCTL_W : MALLCTL_R,
        };
        info = &guessed;
    }
    bool action = info->access == MALLCTL_ACTION;
    if (value && action) {
        say_error("%s is an action and takes no value", name);
        return -1;
    }
    bool needs_force;
    const char *effect = mallctl_side_effect(name, &needs_force);
    if (effect && needs_force && !force) {
        say_error("%s %s: add --force if that is what you want", name, effect);
        return -1;
    }
    if (!value && info->access == MALLCTL_W)
        return refuse_bare_write(name, info);
    enum mallctl_type wt = info->write_type;
    union { bool b; uint64_t u64; char pad[8]; } newv = {0}, oldv = {0};
    size_t newlen = 0;
    if (value && wt != MALLCTL_STRING && mallctl_value_parse(wt, value, &newv, &newlen, &err)) {
        say_error("%s: %s", name, err.msg);
        return -1;
    }
    if (value && mallctl_owner_allows(s, name, &newv, force))
        return -1;
    /* Read the old value in the same call only where jemalloc allows both. */
    bool readable = !action && (value ? info->access == MALLCTL_RW : true);
    struct mallctl_call calls[3];
    size_t n = 0, lg_before = 0;
    int lg_call = -1;
    bool stats = !value && strncmp(name, "stats.", 6) == 0;
    uint64_t one = 1;
    if (stats)   /* stats.* move only when epoch is written: refresh them first */
        calls[n++] = (struct mallctl_call){.name = "epoch", .new = &one, .newlen = sizeof one};
    if (value && strcmp(name, "prof.reset") == 0) {
        lg_call = (int)n;
        calls[n++] = (struct mallctl_call){.name = "prof.lg_sample", .old = &lg_before,
                                           .oldlen = sizeof lg_before};
    }
    struct mallctl_call *call = &calls[n++];
    *call = (struct mallctl_call){
        .name = name,
        .old = readable ? &oldv : NULL,
        .oldlen = readable ? mallctl_type_size(info->type) : 0,
        .new = value && wt != MALLCTL_STRING ? &newv : NULL,
        .newlen = newlen,
        .new_string = value && wt == MALLCTL_STRING ? value : NULL,
    };
    if (control_run_calls_as(s, calls, n, info == &guessed ? info : NULL))
        return -1;
    if (stats && calls[0].ret)
        return control_mallctl_failed(s, "epoch", calls[0].ret, true);
    if (call->ret)
        return control_mallctl_failed(s, name, call->ret, value != NULL);
    if (value)
        mallctl_note_change(s, name, &oldv, &newv, &lg_before,
                            lg_call >= 0 ? calls[lg_call].ret : -1);
    char old[300] = "";
    if (readable && info->type == MALLCTL_STRING) {
        if (!oldv.u64)
            snprintf(old, sizeof old, "(null)");
        else if (target_read_string(s->target, oldv.u64, old, sizeof old, &err))
            snprintf(old, sizeof old, "(unreadable: %.200s)", err.msg);
    } else if (readable) {
        mallctl_value_format(info->type, &oldv, old, sizeof old);
    }
    if (json) {
        /* {"schema", "name", "type", then "value" (a read), "old" and "new"
         * (a write), or "done" (an action; epoch: statistics refreshed)} */
        json_object *j = json_answer_new();
        json_object_object_add(j, "name", json_object_new_string(name));
        json_object_object_add(j, "type", json_object_new_string(mallctl_type_name(info->type)));
        if (readable)
            json_object_object_add(j, value ? "old" : "value",
                                   json_mallctl_value(info->type, &oldv, oldv.u64 ? old : NULL));
        if (value)
            json_object_object_add(j, "new", wt == MALLCTL_STRING
                                   ? json_object_new_string(value)
                                   : json_mallctl_value(wt, &newv, NULL));
        if (action)
            json_object_object_add(j, "done", json_object_new_boolean(true));
        return json_answer_emit(s, j);
    }
    char ob[TEXT_ESCAPE_MAX(sizeof old)];
    const char *shown = text_escape(old, ob, sizeof ob);  /* the target's string */
    if (action)
        fprintf(s->out, "%s: done%s%s%s\n", name, effect ? " (it " : "", effect ? effect : "",
                effect ? ")" : "");
    else if (value && strcmp(name, "epoch") == 0)
        fprintf(s->out, "epoch: statistics refreshed\n");
    else if (value && readable)
        fprintf(s->out, "%s: %s -> %s\n", name, shown, value);
    else if (value)
        fprintf(s->out, "%s: set to %s\n", name, value);
    else
        fprintf(s->out, "%s: %s\n", name, shown);
    return 0;
}
