/* cmd_control.c - the commands that drive a live process's jemalloc:
 * attach, detach, info, jemalloc, prof, dump and mallctl.  Each builds a
 * batch of mallctl calls for attach/ to run in one stop of one thread, and
 * turns jemalloc's answers into sentences (lib/mallctl). */
#include "repl/commands.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/mallctl.h"
#include "lib/analysis.h"

/* One value to read from the target, typed by lib/mallctl's table. */
struct query {
    const char *name;
    int ret;                 /* mallctl's answer; -1 when not run */
    union {
        bool b;
        unsigned u32;
        uint64_t u64;
        int64_t i64;
    } v;
    char str[256];           /* for string values, read back from the target */
};

static const struct jemalloc_copy *selected_copy(struct session *s)
{
    return target_jemalloc(s->target, target_jemalloc_selected(s->target));
}

static void conf_var(struct session *s, char *buf, size_t len)
{
    mallctl_conf_var(selected_copy(s)->prefix, buf, len);
}

/* Say why mallctl refused name (ret != 0); returns -1. */
static int mallctl_failed(struct session *s, const char *name, int ret, bool writing)
{
    char var[64];
    struct mp_error err;
    conf_var(s, var, sizeof var);
    mallctl_explain(name, ret, writing, var, &err);
    command_error("%s", err.msg);
    return -1;
}

/* Run the calls; on a failure to call at all, say so and return -1. */
static int run_calls(struct session *s, struct mallctl_call *calls, size_t n)
{
    struct mp_error err;
    if (target_mallctl(s->target, calls, n, &err) == 0)
        return 0;
    command_error("%s", err.msg);
    if (target_must_exit(s->target)) {
        command_error("exiting: a thread of process %d was left inside a call, and "
                      "restores itself when the call returns", (int)target_pid(s->target));
        s->quit = true;
    }
    return -1;
}

/* Read every query in one stop; strings are fetched afterwards without
 * stopping anything.  A per-name failure is left in q->ret. */
static int query_run(struct session *s, struct query *q, size_t n)
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
    if (run_calls(s, calls, n))
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

static struct query *query_find(struct query *q, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(q[i].name, name) == 0)
            return &q[i];
    return NULL;
}

/* The value of one query as text, or why it is missing. */
static const char *query_text(const struct query *q, char *buf, size_t len)
{
    const struct mallctl_info *info = mallctl_lookup(q->name);
    if (q->ret != 0) {
        snprintf(buf, len, "(unavailable: %s)", strerror(q->ret));
        return buf;
    }
    if (info && info->type == MALLCTL_STRING)
        return q->str;
    mallctl_value_format(info ? info->type : MALLCTL_U64, &q->v, buf, len);
    return buf;
}

/* The profiling state that decides what memprof may do and must warn about. */
static const char *const state_names[] = {
    "version", "config.prof", "opt.prof", "opt.prof_active", "prof.active",
    "prof.lg_sample", "opt.lg_prof_interval", "opt.prof_prefix", "prof.gdump",
};
#define NSTATE (sizeof state_names / sizeof *state_names)

static int state_read(struct session *s, struct query *q)
{
    for (size_t i = 0; i < NSTATE; i++)
        q[i] = (struct query){.name = state_names[i], .ret = -1};
    return query_run(s, q, NSTATE);
}

/* Warnings a careful operator wants before memprof changes anything. */
static void state_warn(struct session *s, struct query *q)
{
    char var[64];
    conf_var(s, var, sizeof var);
    struct query *cfg = query_find(q, NSTATE, "config.prof");
    struct query *opt = query_find(q, NSTATE, "opt.prof");
    struct query *optact = query_find(q, NSTATE, "opt.prof_active");
    struct query *act = query_find(q, NSTATE, "prof.active");
    struct query *ival = query_find(q, NSTATE, "opt.lg_prof_interval");
    struct query *prefix = query_find(q, NSTATE, "opt.prof_prefix");
    if (cfg->ret != 0 || !cfg->v.b) {
        fprintf(stderr, "warning: this jemalloc was built without profiling support "
                "(config.prof is false): memprof can read statistics and mallctl "
                "values, but cannot profile this process\n");
        return;
    }
    if (opt->ret != 0 || !opt->v.b) {
        fprintf(stderr, "warning: heap profiling was not enabled when this process "
                "started (opt.prof is false), and jemalloc cannot enable it later. "
                "Restart it with %s=prof:true,prof_active:false to profile it "
                "(no cost until 'prof on')\n", var);
        return;
    }
    if ((optact->ret == 0 && optact->v.b) || (act->ret == 0 && act->v.b))
        fprintf(stderr, "warning: profiling is already active in this process "
                "(its own %s, or someone else, turned it on); 'prof off' or "
                "'prof sample' would change what its owners rely on\n", var);
    if (ival->ret == 0 && ival->v.i64 >= 0)
        fprintf(stderr, "warning: this process already dumps profiles by itself "
                "every 2^%" PRId64 " bytes allocated (opt.lg_prof_interval), to "
                "files named %s.*; 'prof sample' and 'prof reset' also reset "
                "what those dumps count\n", ival->v.i64,
                prefix->ret == 0 ? prefix->str : "jeprof");
}

static void print_copies(struct session *s)
{
    size_t n = target_jemalloc_count(s->target), sel = target_jemalloc_selected(s->target);
    for (size_t i = 0; i < n; i++) {
        const struct jemalloc_copy *c = target_jemalloc(s->target, i);
        fprintf(s->out, "  %c %zu: %smallctl at 0x%" PRIx64 " in %s (%s%s)\n",
                i == sel ? '*' : ' ', i, c->prefix, c->mallctl, c->object,
                c->static_copy ? "linked in" : "shared object",
                c->dynamic ? "" : ", .symtab only");
    }
}

int cmd_attach(struct session *s, int argc, char **argv)
{
    if (argc != 2) {
        command_error("usage: attach PID");
        return -1;
    }
    if (s->target) {
        command_error("already attached to process %d: 'detach' first",
                      (int)target_pid(s->target));
        return -1;
    }
    char *end;
    long pid = strtol(argv[1], &end, 10);
    if (*end || end == argv[1] || pid <= 0 || pid > 0x3fffffff) {
        command_error("'%s' is not a process id", argv[1]);
        return -1;
    }
    struct mp_error err;
    s->target = target_open((pid_t)pid, &err);
    if (!s->target) {
        command_error("%s", err.msg);
        return -1;
    }
    session_drop_symbolizer(s);
    const struct jemalloc_copy *c = selected_copy(s);
    fprintf(s->out, "attached to process %ld (%s): %smallctl in %s\n", pid,
            target_exe(s->target), c->prefix, c->object);
    if (target_jemalloc_count(s->target) > 1) {
        fprintf(s->out, "this process holds %zu copies of jemalloc; using the one "
                "marked '*' ('jemalloc N' picks another):\n",
                target_jemalloc_count(s->target));
        print_copies(s);
    }
    struct query q[NSTATE];
    if (state_read(s, q))
        return -1;
    state_warn(s, q);
    return 0;
}

int cmd_detach(struct session *s, int argc, char **argv)
{
    (void)argv;
    if (argc != 1) {
        command_error("usage: detach");
        return -1;
    }
    pid_t pid = target_pid(s->target);
    target_close(s->target);
    s->target = NULL;
    session_drop_symbolizer(s);
    fprintf(s->out, "detached from process %d\n", (int)pid);
    return 0;
}

int cmd_jemalloc(struct session *s, int argc, char **argv)
{
    if (argc == 1) {
        print_copies(s);
        return 0;
    }
    char *end;
    unsigned long i = strtoul(argv[1], &end, 10);
    struct mp_error err;
    if (argc != 2 || *end || end == argv[1]) {
        command_error("usage: jemalloc [N]");
        return -1;
    }
    if (target_jemalloc_select(s->target, i, &err)) {
        command_error("%s", err.msg);
        return -1;
    }
    print_copies(s);
    return 0;
}

int cmd_info(struct session *s, int argc, char **argv)
{
    (void)argv;
    if (argc != 1) {
        command_error("usage: info");
        return -1;
    }
    const char *refused = target_calls_refused(s->target);
    if (refused) {
        fprintf(s->out, "pid                  %d\n", (int)target_pid(s->target));
        fprintf(s->out, "calls                refused: %s\n", refused);
        return 0;
    }
    struct query q[NSTATE];
    if (state_read(s, q))
        return -1;
    const struct jemalloc_copy *c = selected_copy(s);
    char buf[64];
    fprintf(s->out, "pid                  %d\n", (int)target_pid(s->target));
    fprintf(s->out, "executable           %s\n", target_exe(s->target));
    fprintf(s->out, "threads              %d\n", target_thread_count(s->target));
    fprintf(s->out, "jemalloc             %s\n", query_text(&q[0], buf, sizeof buf));
    fprintf(s->out, "  found in           %s (%s)\n", c->object,
            c->static_copy ? "linked into the executable" : "shared object");
    fprintf(s->out, "  symbol             %smallctl at 0x%" PRIx64 " (prefix '%s'%s)\n",
            c->prefix, c->mallctl, c->prefix, c->dynamic ? "" : ", .symtab only");
    for (size_t i = 1; i < NSTATE; i++)
        fprintf(s->out, "%-20s %s\n", q[i].name, query_text(&q[i], buf, sizeof buf));
    const struct target_pause_stats *ps = target_pauses(s->target);
    fprintf(s->out, "pauses               %u stops of one thread: last %.0f us (thread %d), "
            "median %.0f us, p90 %.0f us, max %.0f us; %u unsafe threads skipped\n",
            ps->calls, ps->last_us, (int)ps->last_tid, ps->median_us, ps->p90_us,
            ps->max_us, ps->unsafe_retries);
    return 0;
}

/* Write a bool to prof.active, reading the old value in the same call. */
static int prof_set_active(struct session *s, bool on)
{
    bool old = false;
    struct mallctl_call call = {
        .name = "prof.active", .old = &old, .oldlen = sizeof old,
        .new = &on, .newlen = sizeof on,
    };
    if (run_calls(s, &call, 1))
        return -1;
    if (call.ret)
        return mallctl_failed(s, "prof.active", call.ret, true);
    fprintf(s->out, "profiling is now %s (was %s)\n", on ? "on" : "off", old ? "on" : "off");
    return 0;
}

/* prof.reset, with a new lg_sample or keeping the current one. */
static int prof_reset(struct session *s, const size_t *lg_sample)
{
    struct mallctl_call call = {
        .name = "prof.reset", .new = lg_sample,
        .newlen = lg_sample ? sizeof *lg_sample : 0,
    };
    if (run_calls(s, &call, 1))
        return -1;
    if (call.ret)
        return mallctl_failed(s, "prof.reset", call.ret, true);
    return 0;
}

/* The overhead of sampling at 2^lg (FIELD-NOTES 4): refuse a rate that
 * would double the process's memory unless forced; warn from 10 %. */
static int sample_check(struct session *s, size_t lg, bool force)
{
    uint64_t one = 1;
    uint64_t allocated = 0;
    struct mallctl_call calls[] = {
        {.name = "epoch", .new = &one, .newlen = sizeof one},
        {.name = "stats.allocated", .old = &allocated, .oldlen = sizeof allocated},
    };
    if (run_calls(s, calls, 2))
        return -1;
    double ratio = 16384.0 / (double)(UINT64_C(1) << lg);
    char est[32], cur[32];
    analysis_format_bytes(mallctl_sampling_overhead(allocated, (unsigned)lg), false, false, est, sizeof est);
    analysis_format_bytes((double)allocated, false, false, cur, sizeof cur);
    if (ratio < 0.1)
        return 0;
    if (ratio >= 1.0 && !force) {
        command_error("sampling every 2^%zu bytes could add about %.0f%% to the "
                      "process's small-object memory (~%s on %s allocated now). "
                      "Use 'prof sample %zu --force' if the process can afford it, "
                      "or a rate of 15 or more", lg, ratio * 100, est,
                      calls[1].ret ? "?" : cur, lg);
        return -1;
    }
    fprintf(stderr, "warning: sampling every 2^%zu bytes can add about %.0f%% to "
            "the process's small-object memory (~%s on %s allocated now)\n",
            lg, ratio * 100, est, calls[1].ret ? "?" : cur);
    return 0;
}

int cmd_prof(struct session *s, int argc, char **argv)
{
    const char *usage = "usage: prof on|off|sample N [--force]|reset";
    if (argc < 2) {
        command_error("%s", usage);
        return -1;
    }
    if (strcmp(argv[1], "on") == 0 && argc == 2)
        return prof_set_active(s, true);
    if (strcmp(argv[1], "off") == 0 && argc == 2)
        return prof_set_active(s, false);
    if (strcmp(argv[1], "reset") == 0 && argc == 2) {
        if (prof_reset(s, NULL))
            return -1;
        fprintf(s->out, "profile counters reset\n");
        return 0;
    }
    if (strcmp(argv[1], "sample") == 0 && (argc == 3 || argc == 4)) {
        bool force = argc == 4 && strcmp(argv[3], "--force") == 0;
        char *end;
        unsigned long lg = strtoul(argv[2], &end, 10);
        if (argc == 4 && !force) {
            command_error("%s", usage);
            return -1;
        }
        if (*end || end == argv[2] || argv[2][0] == '-' || lg > 62) {
            command_error("'%s' is not a sample rate: give N from 0 to 62, meaning "
                          "one sample every 2^N bytes on average (default 19)", argv[2]);
            return -1;
        }
        size_t lgs = lg;
        if (sample_check(s, lgs, force) || prof_reset(s, &lgs))
            return -1;
        char every[32];
        analysis_format_bytes((double)(UINT64_C(1) << lg), false, false, every, sizeof every);
        fprintf(s->out, "counters reset; sampling every 2^%lu bytes (%s) on average\n",
                lg, every);
        return 0;
    }
    command_error("%s", usage);
    return -1;
}

/* Save a dump's bytes to a local file. */
static int save_file(const char *path, const char *data, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        command_error("cannot create %s: %s", path, strerror(errno));
        return -1;
    }
    size_t off = 0;
    while (off < len) {
        ssize_t w = write(fd, data + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            command_error("cannot write %s: %s", path, strerror(errno));
            close(fd);
            return -1;
        }
        off += (size_t)w;
    }
    if (close(fd)) {
        command_error("cannot write %s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

/* Ask the process to write its profile into the session directory and
 * bring the bytes back. */
static int dump_fetch(struct session *s, char **data, size_t *len)
{
    const char *dir;
    struct mp_error err;
    if (target_dump_dir(s->target, &dir, &err)) {
        command_error("%s", err.msg);
        return -1;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/dump-%u.heap", dir, s->dump_seq + 1);
    struct mallctl_call call = {.name = "prof.dump", .new_string = path};
    if (run_calls(s, &call, 1))
        return -1;
    if (call.ret)
        return mallctl_failed(s, "prof.dump", call.ret, true);
    if (target_fetch_dump(s->target, path, data, len, &err)) {
        command_error("%s", err.msg);
        return -1;
    }
    return 0;
}

int cmd_dump(struct session *s, int argc, char **argv)
{
    const char *file = NULL, *name = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--name") == 0 && i + 1 < argc)
            name = argv[++i];
        else if (argv[i][0] != '-' && !file)
            file = argv[i];
        else {
            command_error("usage: dump [FILE] [--name NAME]");
            return -1;
        }
    }
    char *data;
    size_t len;
    if (dump_fetch(s, &data, &len))
        return -1;
    int rc = -1;
    if (file && save_file(file, data, len))
        goto out;
    char source[64];
    snprintf(source, sizeof source, "pid %d", (int)target_pid(s->target));
    struct mp_error err;
    struct profile *p = profile_parse(data, len, file ? file : source, &err);
    if (!p) {
        command_error("the process wrote a profile memprof cannot read: %s", err.msg);
        goto out;
    }
    struct session_dump *d = session_add_dump(s, p, name, source);
    if (!d) {
        profile_free(p);
        command_error("out of memory");
        goto out;
    }
    if (file)
        d->saved_path = strdup(file);
    char total[32];
    analysis_format_bytes(p->total.inuse_bytes, false, false, total, sizeof total);
    fprintf(s->out, "%s: %zu stacks, %s in use%s%s\n", d->name, p->nstacks, total,
            file ? ", saved to " : "", file ? file : "");
    rc = 0;
out:
    free(data);
    return rc;
}

static void mallctl_list(struct session *s)
{
    for (const struct mallctl_info *m = mallctl_table; m->name; m++)
        fprintf(s->out, "  %-36s %-9s %-6s %s\n", m->name, mallctl_type_name(m->type),
                m->access == MALLCTL_ACTION ? "action"
                : m->access == MALLCTL_RW ? "rw" : m->access == MALLCTL_R ? "r" : "w",
                m->doc);
}

/* mallctl NAME [VALUE] [--type T] */
int cmd_mallctl(struct session *s, int argc, char **argv)
{
    const char *name = NULL, *value = NULL, *type = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--type") == 0 && i + 1 < argc)
            type = argv[++i];
        else if (!name)
            name = argv[i];
        else if (!value)
            value = argv[i];
        else {
            command_error("usage: mallctl NAME [VALUE] [--type TYPE]");
            return -1;
        }
    }
    if (!name) {
        mallctl_list(s);
        return 0;
    }
    if (!s->target) {
        command_error("'mallctl %s' needs a process: attach to one first", name);
        return -1;
    }
    struct mp_error err;
    const struct mallctl_info *info = mallctl_lookup(name);
    enum mallctl_type t;
    if (type) {
        if (mallctl_type_parse(type, &t, &err)) {
            command_error("%s", err.msg);
            return -1;
        }
    } else if (info) {
        t = info->type;
    } else {
        command_error("memprof does not know the type of '%s': give it with "
                      "--type bool|unsigned|size_t|ssize_t|uint64_t|string|void", name);
        return -1;
    }
    if (value && t == MALLCTL_VOID) {
        command_error("%s is an action and takes no value", name);
        return -1;
    }
    union { bool b; uint64_t u64; char pad[8]; } newv = {0}, oldv = {0};
    size_t newlen = 0;
    if (value && t != MALLCTL_STRING && mallctl_value_parse(t, value, &newv, &newlen, &err)) {
        command_error("%s: %s", name, err.msg);
        return -1;
    }
    /* Read the old value too, unless the name is write-only or an action. */
    bool readable = t != MALLCTL_VOID &&
                    (!info || (info->access & MALLCTL_R)) && !(value && !info);
    struct mallctl_call call = {
        .name = name,
        .old = readable ? &oldv : NULL,
        .oldlen = readable ? mallctl_type_size(t) : 0,
        .new = value && t != MALLCTL_STRING ? &newv : NULL,
        .newlen = newlen,
        .new_string = value && t == MALLCTL_STRING ? value : NULL,
    };
    if (run_calls(s, &call, 1))
        return -1;
    if (call.ret)
        return mallctl_failed(s, name, call.ret, value != NULL);
    char old[300] = "";
    if (readable && t == MALLCTL_STRING) {
        if (!oldv.u64)
            snprintf(old, sizeof old, "(null)");
        else if (target_read_string(s->target, oldv.u64, old, sizeof old, &err))
            snprintf(old, sizeof old, "(unreadable: %.200s)", err.msg);
    } else if (readable) {
        mallctl_value_format(t, &oldv, old, sizeof old);
    }
    if (t == MALLCTL_VOID)
        fprintf(s->out, "%s: done\n", name);
    else if (value && readable)
        fprintf(s->out, "%s: %s -> %s\n", name, old, value);
    else if (value)
        fprintf(s->out, "%s: set to %s\n", name, value);
    else
        fprintf(s->out, "%s: %s\n", name, old);
    return 0;
}
