/* mesos_job.c - the work of Mesos' /memory-profiler endpoints inside a
 * worker attached to the process (mesos_job.h): its state, jemalloc's
 * statistics, and a profiling run from start to its files.  A run is one
 * of memprof's profiling runs (session/profile_run.c), so its settings
 * are put back at its end exactly as at the prompt, whichever profiler
 * does it: jemalloc's own (prof:true) or memprof's sampler. */
#include "serve/mesos_job.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/analysis/analysis.h"
#include "lib/base/file_write.h"
#include "lib/base/own_dir.h"
#include "lib/base/tar_gz.h"
#include "lib/proc/environ.h"
#include "lib/report/graphviz.h"
#include "session/control.h"
#include "session/jemalloc_stats_json.h"
#include "session/process_files.h"
#include "session/profile_run.h"
#include "session/sampling.h"
#include "session/say.h"
#include "serve/mesos_runs.h"
#include "serve/worker.h"

/* jemalloc's statistics in the answer, at most this large. */
#define STATISTICS_MAX (64u << 20)

/* ---- state ---- */

/* At most this much of a malloc_conf is given (the process's text). */
#define MALLOC_CONF_MAX 1024

static json_object *bounded_string(const char *text)
{
    return json_object_new_string_len(text, (int)strnlen(text, MALLOC_CONF_MAX));
}

/* Mesos' malloc_conf: what the process's environment set at its start
 * (MALLOC_CONF, or its prefixed copy's name: _RJEM_MALLOC_CONF), and what
 * its jemalloc was built with (config.malloc_conf, --with-malloc-conf).
 * Only that one variable of the environment is read out. */
static json_object *malloc_conf_json(struct session *s)
{
    json_object *o = json_object_new_object();
    char var[64];
    control_conf_var(s, var, sizeof var);
    size_t len = 0;
    char *env = process_file(s, "environ", &len);
    const char *value = env ? proc_environ_value(env, len, var) : NULL;
    json_object_object_add(o, "environment", bounded_string(value ? value : ""));
    json_object_object_add(o, "environment_variable", json_object_new_string(var));
    free(env);
    uint64_t at = 0;
    char built[MALLOC_CONF_MAX + 1] = "";
    struct mallctl_call c = {.name = "config.malloc_conf", .old = &at, .oldlen = sizeof at};
    struct mp_error err;
    if (control_run_calls(s, &c, 1) == 0 && c.ret == 0 && at &&
        target_read_string(s->target, at, built, sizeof built, &err) < 0)
        snprintf(built, sizeof built, "(unreadable: %.200s)", err.msg);
    json_object_object_add(o, "build_options", bounded_string(built));
    return o;
}

/* The process's part of /state: the allocator, and for a jemalloc with
 * its own profiler whether it is built in, enabled and active, and its
 * malloc_conf as Mesos gives it. */
static json_object *process_json(struct session *s)
{
    json_object *je = json_object_new_object();
    bool jemalloc = s->alloc.kind == ALLOCATOR_JEMALLOC;
    if (jemalloc && control_prof_conf_read(s) == 0) {
        struct query q[CONTROL_NSTATE];
        bool active = false;
        if (control_state_read(s, q) == 0) {
            struct query *act = control_query_find(q, CONTROL_NSTATE, "prof.active");
            active = act->ret == 0 && act->v.b;
        }
        json_object_object_add(je, "profiling_built_in",
                               json_object_new_boolean(s->prof_conf.config_prof));
        json_object_object_add(je, "profiling_enabled",
                               json_object_new_boolean(s->prof_conf.opt_prof));
        json_object_object_add(je, "profiling_active", json_object_new_boolean(active));
        json_object_object_add(je, "profiling_active_at_start",
                               json_object_new_boolean(s->prof_conf.opt_prof_active));
    }
    if (jemalloc)
        json_object_object_add(je, "malloc_conf", malloc_conf_json(s));
    return je;
}

int mesos_state_job(struct session *s, void *arg)
{
    const struct mesos_run_state *st = arg;
    json_object *doc = mesos_state_doc(target_pid(s->target), st);
    json_object *mp;
    json_object_object_get_ex(doc, "memory_profiler", &mp);
    json_object_object_add(mp, "jemalloc_detected",
                           json_object_new_boolean(s->alloc.kind == ALLOCATOR_JEMALLOC));
    json_object_object_add(mp, "allocator",
                           json_object_new_string(allocator_kind_key(s->alloc.kind)));
    char why[SAMPLING_WHY_MAX];
    int nfilters;
    bool own = !sampling_applies(s) && s->alloc.kind == ALLOCATOR_JEMALLOC;
    enum sampling_verdict v = own ? SAMPLING_NO
                              : sampling_verdict(s, false, &nfilters, why, sizeof why);
    const char *by = own ? "jemalloc" : v != SAMPLING_NO ? "memprof sampler" : NULL;
    json_object_object_add(mp, "profiler", by ? json_object_new_string(by) : NULL);
    if (v == SAMPLING_UNJUDGED)   /* judged when a run starts */
        json_object_object_add(mp, "profiler_note", json_object_new_string(why));
    if (!by) {
        char text[1280];
        sampling_why_not_text(s, why, text, sizeof text);
        json_object_object_add(mp, "why_no_profiler", json_object_new_string(text));
    }
    if (s->alloc.kind == ALLOCATOR_JEMALLOC)
        json_object_object_add(doc, "jemalloc", process_json(s));
    fprintf(s->out, "%s\n", json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY));
    json_object_put(doc);
    return 200;
}

json_object *mesos_state_doc(pid_t pid, const struct mesos_run_state *st)
{
    json_object *doc = json_object_new_object(), *mp = json_object_new_object();
    json_object_object_add(doc, "pid", json_object_new_int((int)pid));
    json_object_object_add(doc, "memory_profiler", mp);
    if (st->active_id) {
        json_object *run = json_object_new_object();
        json_object_object_add(run, "id", json_object_new_int64(st->active_id));
        json_object_object_add(run, "remaining_seconds",
                               json_object_new_double(st->remaining_s));
        json_object_object_add(mp, "current_run", run);
    }
    if (st->last_id)
        json_object_object_add(mp, "last_finished_run", json_object_new_int64(st->last_id));
    return doc;
}

/* ---- statistics ---- */

int mesos_statistics_job(struct session *s, void *arg)
{
    (void)arg;
    if (s->alloc.kind != ALLOCATOR_JEMALLOC) {
        say_error("process %d's allocator is %s: /memory-profiler/statistics is jemalloc's "
                  "malloc_stats_print; GET /metrics?pid=%d has its figures",
                  (int)target_pid(s->target), allocator_kind_name(s->alloc.kind),
                  (int)target_pid(s->target));
        return 409;
    }
    return jemalloc_stats_json(s, STATISTICS_MAX) == 0 ? 200 : 500;
}

/* ---- a run ---- */

/* Whether the process may have a run: 0, or its HTTP status after saying
 * why not.  Mesos' rule: profiling its owner turned on at start (MALLOC_CONF
 * prof_active, true by default with prof:true) is the owner's, 409. */
static int run_allowed(struct session *s)
{
    int pid = (int)target_pid(s->target);
    if (sampling_applies(s))
        return sampling_require(s) < 0 ? 422 : 0;
    if (control_profiling_possible(s) < 0)
        return 409;
    if (control_prof_conf_read(s) < 0)
        return 500;
    if (control_own_profiler_sees(s, "a run") < 0)
        return 422;
    if (s->prof_conf.opt_prof_active) {
        say_error("process %d's owner turned profiling on at its start (opt.prof_active "
                  "is true: prof_active defaults to true with prof:true); it is the "
                  "owner's, so no run here: GET /debug/pprof/heap?pid=%d reads its heap "
                  "profile as it is", pid, pid);
        return 409;
    }
    return 0;
}

/* Write one file of the run's results. */
static void put_file(const char *dir, const char *name, const char *data, size_t len)
{
    char path[PATH_MAX + 32];
    struct mp_error err;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (file_write_new(path, O_EXCL | O_NOFOLLOW, 0600, data, len, &err) < 0)
        say_error("%s", err.msg);
}

/* The dump's top (jeprof --text's table, every row) and its call graph
 * drawn by dot, or why there is none. */
static void analyse(struct session *s, struct session_dump *d, const char *dir)
{
    struct mp_error err = {.msg = ""};
    const struct profile *p = session_dump_profile(s, d);    /* NULL: said why */
    struct analysis *a = p ? analysis_new(ANALYSIS_FUNCTIONS, analysis_symbolizer_resolve,
                                          session_symbolizer(s)) : NULL;
    const struct analysis_view *v = a ? analysis_view(a, p, &err) : NULL;
    struct analysis_options o = {.nodefraction = 0.005, .edgefraction = 0.001};
    struct analysis_source src = {d->name, NULL};
    char *text = NULL, *dot = NULL, *svg = NULL;
    size_t text_len = 0, dot_len = 0, svg_len = 0;
    FILE *t = open_memstream(&text, &text_len), *g = open_memstream(&dot, &dot_len);
    int rt = v && t ? analysis_top(a, v, NULL, &o, &src, false, t, &err) : -1;
    int rg = v && g ? analysis_graph(a, v, &o, &src, g, &err) : -1;
    if (t)
        fclose(t);
    if (g)
        fclose(g);
    if (rt == 0)
        put_file(dir, MESOS_TEXT, text, text_len);
    if (rg == 0 && graphviz_svg("download/graph", dot, dot_len, &svg, &svg_len, &err) == 0)
        put_file(dir, MESOS_GRAPH, svg, svg_len);
    else
        put_file(dir, MESOS_GRAPH_NOTE, err.msg, strlen(err.msg));
    free(text);
    free(dot);
    free(svg);
    analysis_free(a);
}

/* The run saved as 'profile save' saves it (its dumps, their build-ids and
 * the objects its frames are named from, .build-id/) and packed as
 * MESOS_ARCHIVE, a tar.gz of one directory that 'memprof DIR' reads on any
 * machine; or why not, in MESOS_ARCHIVE_NOTE.  The saved directory goes
 * once packed.  (After the answer the worker's output goes nowhere, so
 * the reasons here are memprof's own words, not profile save's.) */
static void keep_archive(struct session *s, const struct mesos_run_arg *r)
{
    char top[64], saved[PATH_MAX + 64];
    char why[1200] = "";
    snprintf(top, sizeof top, "memprof-run-%d-%u", (int)target_pid(s->target), r->id);
    snprintf(saved, sizeof saved, "%s/%s", r->dir, top);
    if (profile_run_save(s, s->run->name, saved) < 0)
        snprintf(why, sizeof why, "the run could not be saved with its objects (as "
                 "'profile save' saves it) in the agent's directory %.300s", r->dir);
    /* written aside and renamed whole: a worker ended at its time limit
     * in the middle leaves no archive rather than a cut one; every name
     * under the run's directory's descriptor */
    int dirfd = why[0] ? -1 : open(r->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int out = dirfd < 0 ? -1 : openat(dirfd, MESOS_ARCHIVE_PART, O_WRONLY | O_CREAT |
                                      O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    struct mp_error err;
    if (!why[0] && (dirfd < 0 || out < 0))
        snprintf(why, sizeof why, "cannot write %.300s/%s: %s", r->dir, MESOS_ARCHIVE_PART,
                 strerror(errno));
    else if (!why[0] && tar_gz_dir(dirfd, top, out, MESOS_DOWNLOAD_MAX, &err) < 0)
        snprintf(why, sizeof why, "%s", err.msg);
    else if (!why[0] && renameat(dirfd, MESOS_ARCHIVE_PART, dirfd, MESOS_ARCHIVE) < 0)
        snprintf(why, sizeof why, "cannot rename %.300s/%s: %s", r->dir, MESOS_ARCHIVE_PART,
                 strerror(errno));
    if (why[0] && out >= 0)
        unlinkat(dirfd, MESOS_ARCHIVE_PART, 0);
    if (out >= 0)
        close(out);
    if (dirfd >= 0) {
        own_dir_remove_tree(dirfd, top, TAR_GZ_DEPTH);
        close(dirfd);
    } else
        own_dir_remove_tree(AT_FDCWD, saved, TAR_GZ_DEPTH);
    if (why[0])
        put_file(r->dir, MESOS_ARCHIVE_NOTE, why, strlen(why));
}

/* What the run left: its last dump as jemalloc (or the sampler) wrote it,
 * the run with its objects (an archive), the text and the graph, and how
 * it ended. */
static void keep_results(struct session *s, const struct mesos_run_arg *r)
{
    struct profile_run *run = s->run;
    struct session_dump *d = run->ndumps ? session_find_dump(s, run->latest) : NULL;
    size_t len = 0;
    struct mp_error err;
    char *raw = d ? session_dump_raw(d, &len, &err) : NULL;
    if (d && !raw)
        say_error("%s", err.msg);
    if (raw)
        put_file(r->dir, MESOS_RAW, raw, len);
    free(raw);
    json_object *o = json_object_new_object();
    json_object_object_add(o, "id", json_object_new_int64(r->id));
    json_object_object_add(o, "state", json_object_new_string(profile_run_state_name(run->state)));
    json_object_object_add(o, "why", json_object_new_string(run->why));
    json_object_object_add(o, "dumps", json_object_new_int64(run->ndumps));
    const char *doc = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
    put_file(r->dir, MESOS_OUTCOME, doc, strlen(doc));
    json_object_put(o);
    /* Last, as the slowest (dot on a large graph): a worker ended at its
     * time limit in the middle leaves the dump and the outcome whole. */
    if (raw) {
        keep_archive(s, r);
        analyse(s, d, r->dir);
    }
}

/* Wait for the run's end, or the agent's word: a byte to stop, end of
 * file when the agent is gone (it never leaves a run behind). */
static void follow(struct session *s, int control)
{
    while (profile_run_running(s)) {
        double next = profile_run_next(s);
        int ms = next < 0 ? 1000 : next > 60 ? 60000 : (int)(next * 1000) + 1;
        struct pollfd p = {.fd = control, .events = POLLIN};
        int n = poll(&p, 1, ms);
        if (n < 0 && errno == EINTR)
            continue;
        if (n > 0) {
            char b;
            ssize_t got = read(control, &b, 1);
            profile_run_finish(s, RUN_STOPPED, got == 1 ? "a stop request"
                               : "the agent ended", true);
            return;
        }
        profile_run_tick(s);
    }
}

int mesos_run_job(struct session *s, void *arg)
{
    const struct mesos_run_arg *r = arg;
    int status = run_allowed(s);
    if (status)
        return status;
    char name[32];
    snprintf(name, sizeof name, "mesos%u", r->id);
    struct profile_run_options o = {.duration = r->duration, .every = r->duration,
                                    .name = name};
    if (profile_run_start(s, &o) < 0)
        return 500;
    json_object *a = json_object_new_object();
    json_object_object_add(a, "id", json_object_new_int64(r->id));
    json_object_object_add(a, "remaining_seconds", json_object_new_double(r->duration));
    json_object_object_add(a, "message", json_object_new_string("Heap profiling started"));
    json_object_object_add(a, "profiler", json_object_new_string(
                               s->run->sampled ? "memprof sampler" : "jemalloc"));
    fprintf(s->out, "%s\n", json_object_to_json_string_ext(a, JSON_C_TO_STRING_PRETTY));
    json_object_put(a);
    int control = worker_answer(s, 200);
    follow(s, control);
    keep_results(s, r);
    return 200;
}
