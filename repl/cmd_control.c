/* cmd_control.c - the commands that drive a live process's jemalloc:
 * attach, detach, info, jemalloc, prof, dump and mallctl.  Each builds a
 * batch of mallctl calls for attach/ to run in one stop of one thread, and
 * turns jemalloc's answers into sentences (lib/mallctl).
 *
 * Every call is checked against jemalloc's own table of names
 * (mallctl_check_call) before anything is stopped: a call of the wrong shape
 * can fault inside jemalloc with its ctl mutex held.  This file also keeps
 * what the session changed (prof.active, the rate, prof.gdump) so that an
 * error exit puts it back, and keeps memprof's hands off the profiling of a
 * process whose owner started it (opt.prof_active) unless forced. */
#include "lib/base/file_write.h"
#include "repl/commands.h"
#include "session/profile_run.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "allocator/jemalloc/mallctl.h"
#include "lib/analysis/analysis.h"
#include "session/json_answer.h"
#include "repl/cmd_memory.h"
#include "repl/options.h"
#include "lib/base/text_escape.h"

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
    return jemalloc_copy(s->target, jemalloc_selected(s->target));
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
    if (s->prof_conf.known &&
        mallctl_failure_is_no_profiling(name, ret, s->prof_conf.config_prof,
                                        s->prof_conf.opt_prof)) {
        mallctl_explain_no_profiling(s->prof_conf.config_prof, var, &err);
        command_error("%s: %s", name, err.msg);
        return -1;
    }
    mallctl_explain(name, ret, writing, var, &err);
    command_error("%s", err.msg);
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
            command_error("%s", err.msg);
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
    command_error("%s", err->msg);
    if (target_must_exit(s->target)) {
        command_error("exiting: a thread of process %d was left inside a call, and "
                      "restores itself when the call returns", (int)target_pid(s->target));
        s->quit = true;
    }
    return -1;
}

static int run_calls(struct session *s, struct mallctl_call *calls, size_t n)
{
    return run_calls_as(s, calls, n, NULL);
}

int control_run_calls(struct session *s, struct mallctl_call *calls, size_t n)
{
    return run_calls(s, calls, n);
}

int control_run_calls_as(struct session *s, struct mallctl_call *calls, size_t n,
                         const struct mallctl_info *unknown)
{
    return run_calls_as(s, calls, n, unknown);
}

int control_mallctl_failed(struct session *s, const char *name, int ret, bool writing)
{
    return mallctl_failed(s, name, ret, writing);
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
        return text_escape(q->str, buf, len);
    mallctl_value_format(info ? info->type : MALLCTL_U64, &q->v, buf, len);
    return buf;
}

/* The profiling state that decides what memprof may do and must warn about. */
static const char *const state_names[] = {
    "version", "config.prof", "opt.prof", "opt.prof_active", "prof.active",
    "prof.lg_sample", "opt.lg_prof_interval", "opt.prof_prefix", "prof.gdump",
};
#define NSTATE (sizeof state_names / sizeof *state_names)

/* Read the state; keep what is fixed at the process's start. */
static int state_read(struct session *s, struct query *q)
{
    for (size_t i = 0; i < NSTATE; i++)
        q[i] = (struct query){.name = state_names[i], .ret = -1};
    if (query_run(s, q, NSTATE))
        return -1;
    struct query *cfg = query_find(q, NSTATE, "config.prof");
    struct query *opt = query_find(q, NSTATE, "opt.prof");
    struct query *optact = query_find(q, NSTATE, "opt.prof_active");
    s->prof_conf = (struct session_prof_conf){
        .known = true,
        .config_prof = cfg->ret == 0 && cfg->v.b,
        .opt_prof = opt->ret == 0 && opt->v.b,
        .opt_prof_active = optact->ret == 0 && optact->v.b,
    };
    return 0;
}

/* Warnings a careful operator wants before memprof changes anything.  They
 * follow the live state (prof.active now), and tell profiling its owner
 * started (opt.prof_active) from profiling turned on at run time. */
static void state_warn(struct session *s, struct query *q)
{
    char var[64], pb[TEXT_ESCAPE_BUF];
    conf_var(s, var, sizeof var);
    struct query *act = query_find(q, NSTATE, "prof.active");
    struct query *ival = query_find(q, NSTATE, "opt.lg_prof_interval");
    struct query *prefix = query_find(q, NSTATE, "opt.prof_prefix");
    if (!s->prof_conf.config_prof) {
        fprintf(stderr, "warning: this jemalloc was built without profiling support "
                "(config.prof is false): memprof can read statistics and mallctl "
                "values, but cannot profile this process\n");
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
        command_status(s, "note: this process started with profiling active "
                       "(opt.prof_active) and it has been turned off since; its owner "
                       "may rely on it: memprof changes it only with --force\n");
    if (ival->ret == 0 && ival->v.i64 >= 0)
        fprintf(stderr, "warning: this process already dumps profiles by itself "
                "every 2^%" PRId64 " bytes allocated (opt.lg_prof_interval), to "
                "files named %s.*; 'prof sample' and 'prof reset' also reset "
                "what those dumps count\n", ival->v.i64,
                prefix->ret == 0 ? text_escape(prefix->str, pb, sizeof pb) : "jeprof");
    struct query *gdump = query_find(q, NSTATE, "prof.gdump");
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
    struct query *act = query_find(q, NSTATE, "prof.active");
    struct query *lg = query_find(q, NSTATE, "prof.lg_sample");
    if (!s->prof_conf.opt_prof || act->ret || lg->ret)
        return;     /* the warnings say why it cannot profile */
    char every[32];
    analysis_format_bytes((double)(UINT64_C(1) << (lg->v.u64 & 63)), false, false,
                          every, sizeof every);
    command_status(s, "profiling is %s in process %d (prof.active %s); sampling every "
                   "2^%" PRIu64 " bytes (%s) on average%s\n", act->v.b ? "on" : "off",
                   (int)target_pid(s->target), act->v.b ? "true" : "false", lg->v.u64,
                   every, act->v.b ? "" : " when on");
}

/* Note that this session turned profiling on or off (for info and dump). */
static void prof_on_note(struct session *s, bool was, bool now)
{
    if (now && !was)
        s->prof_on = (struct session_prof_on){.since = time(NULL)};
    else if (!now)
        s->prof_on = (struct session_prof_on){0};
}

/* "since 14:02:11 (95 s ago)" */
static void since_text(time_t since, char *buf, size_t len)
{
    struct tm tm;
    char hms[16] = "?";
    if (localtime_r(&since, &tm))
        strftime(hms, sizeof hms, "%H:%M:%S", &tm);
    snprintf(buf, len, "%s (%lld s ago)", hms, (long long)(time(NULL) - since));
}

/* Make sure s->prof_conf holds the selected copy's settings (forgotten
 * when another copy is picked). */
static int prof_conf_read(struct session *s)
{
    struct query q[NSTATE];
    return s->prof_conf.known ? 0 : state_read(s, q);
}

/* The MALLOC_CONF rule: a process whose owner turned profiling on at start
 * keeps it as its owner set it unless the user insists. */
int control_owner_allows(struct session *s, const char *what, bool force)
{
    if (force)
        return 0;
    if (prof_conf_read(s))
        return -1;
    if (!s->prof_conf.opt_prof_active)
        return 0;
    char var[64];
    conf_var(s, var, sizeof var);
    command_error("this process's owner turned profiling on at its start "
                  "(opt.prof_active is true, from its %s or built-in malloc_conf) "
                  "and may rely on it: memprof will not %s unless you add --force "
                  "(reading and dumping need no --force)", var, what);
    return -1;
}

/* While a profiling run goes on, it alone changes prof.active, the rate,
 * prof.gdump and prof.prefix: it puts back at its end what it read at its
 * start, so a change meanwhile would be undone, or undo the run. */
static int run_owns_profiling(struct session *s, const char *cmd)
{
    if (!profile_run_running(s))
        return 0;
    command_error("%s: profiling run %s controls profiling in process %d until it ends: "
                  "'profile stop' first (it puts the settings back as they were)", cmd,
                  s->run->name, s->run->pid);
    return -1;
}

/* Profiling must be compiled in and enabled at start for any prof change:
 * jemalloc 5.1 accepts prof.active=true without opt.prof and samples
 * nothing, so this is refused before any call. */
int control_profiling_possible(struct session *s)
{
    if (prof_conf_read(s))
        return -1;
    if (s->prof_conf.config_prof && s->prof_conf.opt_prof)
        return 0;
    char var[64];
    struct mp_error err;
    conf_var(s, var, sizeof var);
    mallctl_explain_no_profiling(s->prof_conf.config_prof, var, &err);
    command_error("%s", err.msg);
    return -1;
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

int cmd_attach(struct session *s, int argc, char **argv)
{
    char *pos[1];
    int npos = options_words(argc, argv, pos, 1);
    if (npos < 0)
        return -1;
    if (npos != 1) {
        command_error("usage: attach PID");
        return -1;
    }
    if (s->target) {
        command_error("already attached to process %d: 'detach' first",
                      (int)target_pid(s->target));
        return -1;
    }
    char *end;
    long pid = strtol(pos[0], &end, 10);
    if (*end || end == pos[0] || pid <= 0 || pid > 0x3fffffff) {
        command_error("'%s' is not a process id", pos[0]);
        return -1;
    }
    struct mp_error err;
    s->target = jemalloc_open((pid_t)pid, &(struct target_options){s->exe, s->debug_dir}, &err);
    if (!s->target) {
        command_error("%s", err.msg);
        return -1;
    }
    target_set_notes(s->target, s->quiet ? NULL : stderr);
    s->prof_conf = (struct session_prof_conf){0};
    s->changes = (struct session_changes){0};
    s->prof_on = (struct session_prof_on){0};
    s->narenas = 0;
    session_drop_symbolizer(s);
    const struct jemalloc_copy *c = selected_copy(s);
    char eb[TEXT_ESCAPE_BUF], ob[TEXT_ESCAPE_BUF], sb[TEXT_ESCAPE_BUF];
    command_status(s, "attached to process %ld (%s): %smallctl in %s%s%s%s\n", pid,
            text_escape(target_exe(s->target), eb, sizeof eb), c->prefix,
            text_escape(c->object, ob, sizeof ob),
            c->symbols_from ? " (symbols from " : "",
            c->symbols_from ? text_escape(c->symbols_from, sb, sizeof sb) : "",
            c->symbols_from ? ")" : "");
    if (jemalloc_copy_count(s->target) > 1) {
        command_status(s, "this process holds %zu copies of jemalloc; using the one "
                       "marked '*' ('jemalloc N' picks another):\n",
                       jemalloc_copy_count(s->target));
        if (!s->quiet)
            print_copies(s, stderr);
    }
    struct query q[NSTATE];
    if (state_read(s, q))
        return -1;
    state_say(s, q);
    state_warn(s, q);
    return 0;
}

unsigned control_narenas(struct session *s)
{
    if (s->narenas || !s->target || target_calls_refused(s->target))
        return s->narenas;
    struct query q = {.name = "arenas.narenas", .ret = -1};
    if (query_run(s, &q, 1) == 0 && q.ret == 0)
        s->narenas = q.v.u32;
    return s->narenas;
}

int cmd_detach(struct session *s, int argc, char **argv)
{
    if (options_words(argc, argv, NULL, 0) < 0)
        return -1;
    /* a run ends first: its last dump and its settings need the process */
    if (profile_run_running(s))
        profile_run_finish(s, RUN_STOPPED, "detach", true);
    control_session_end(s, false);
    pid_t pid = target_pid(s->target);
    target_close(s->target);
    s->target = NULL;
    session_drop_symbolizer(s);
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
    if (run_owns_profiling(s, "jemalloc"))      /* it would restore another copy */
        return -1;
    char *end;
    unsigned long i = strtoul(pos[0], &end, 10);
    struct mp_error err;
    if (*end || end == pos[0] || pos[0][0] == '-') {
        command_error("usage: jemalloc [N]");
        return -1;
    }
    size_t before = jemalloc_selected(s->target);
    if (jemalloc_select(s->target, i, &err)) {
        command_error("%s", err.msg);
        return -1;
    }
    if (i != before) {
        /* What was changed belongs to the other copy: say what stays there
         * and start afresh with this one. */
        size_t now = jemalloc_selected(s->target);
        jemalloc_select(s->target, before, &err);
        control_session_end(s, false);
        jemalloc_select(s->target, now, &err);
        s->changes = (struct session_changes){0};
        s->prof_on = (struct session_prof_on){0};
        s->prof_conf = (struct session_prof_conf){0};   /* read again for this copy */
    }
    print_copies(s, s->out);
    return 0;
}

/* info --json: the same facts under stable keys (docs/memprof.1). */
static int info_json(struct session *s, const char *refused, struct query *q)
{
    json_object *j = json_answer_new();
    json_object_object_add(j, "pid", json_object_new_int((int)target_pid(s->target)));
    if (refused) {
        json_object_object_add(j, "calls_refused", json_object_new_string(refused));
        return json_answer_emit(s, j);
    }
    const struct jemalloc_copy *c = selected_copy(s);
    json_object_object_add(j, "executable", json_object_new_string(target_exe(s->target)));
    json_object_object_add(j, "threads", json_object_new_int(target_thread_count(s->target)));
    json_object *je = json_object_new_object();
    json_object_object_add(je, "object", json_object_new_string(c->object));
    json_object_object_add(je, "linked_in", json_object_new_boolean(c->static_copy));
    json_object_object_add(je, "prefix", json_object_new_string(c->prefix));
    json_object_object_add(je, "mallctl_address", json_object_new_uint64(c->mallctl));
    json_object_object_add(je, "symtab_only", json_object_new_boolean(!c->dynamic));
    json_object_object_add(j, "jemalloc", je);
    json_object *m = json_object_new_object();
    for (size_t i = 0; i < NSTATE; i++) {
        const struct mallctl_info *mi = mallctl_lookup(q[i].name);
        json_object_object_add(m, q[i].name, q[i].ret != 0 || !mi ? NULL :
                               json_mallctl_value(mi->type, &q[i].v, q[i].str));
    }
    json_object_object_add(j, "mallctl", m);
    json_object_object_add(j, "prof_active_since", s->prof_on.since
                           ? json_object_new_int64((int64_t)s->prof_on.since) : NULL);
    const struct target_pause_stats *ps = target_pauses(s->target);
    json_object *p = json_object_new_object();
    json_object_object_add(p, "stops", json_object_new_int64(ps->calls));
    json_object_object_add(p, "last_us", json_object_new_int64(llround(ps->last_us)));
    json_object_object_add(p, "last_thread", json_object_new_int((int)ps->last_tid));
    json_object_object_add(p, "median_us", json_object_new_int64(llround(ps->median_us)));
    json_object_object_add(p, "p90_us", json_object_new_int64(llround(ps->p90_us)));
    json_object_object_add(p, "max_us", json_object_new_int64(llround(ps->max_us)));
    json_object_object_add(p, "unsafe_threads_skipped", json_object_new_int64(ps->unsafe_retries));
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
        fprintf(s->out, "calls                refused: %s\n", refused);
        return 0;
    }
    struct query q[NSTATE];
    if (state_read(s, q))
        return -1;
    if (json)
        return info_json(s, NULL, q);
    const struct jemalloc_copy *c = selected_copy(s);
    char buf[64];
    fprintf(s->out, "pid                  %d\n", (int)target_pid(s->target));
    char eb[TEXT_ESCAPE_BUF];
    fprintf(s->out, "executable           %s\n", text_escape(target_exe(s->target), eb, sizeof eb));
    fprintf(s->out, "threads              %d\n", target_thread_count(s->target));
    fprintf(s->out, "jemalloc             %s\n", query_text(&q[0], buf, sizeof buf));
    fprintf(s->out, "  found in           %s (%s)\n", text_escape(c->object, eb, sizeof eb),
            c->static_copy ? "linked into the executable" : "shared object");
    fprintf(s->out, "  symbol             %smallctl at 0x%" PRIx64 " (prefix '%s'%s)\n",
            c->prefix, c->mallctl, c->prefix, c->dynamic ? "" : ", .symtab only");
    for (size_t i = 1; i < NSTATE; i++) {
        fprintf(s->out, "%-20s %s", q[i].name, query_text(&q[i], buf, sizeof buf));
        if (strcmp(q[i].name, "prof.active") == 0 && s->prof_on.since && q[i].ret == 0 &&
            q[i].v.b) {
            char since[64];
            since_text(s->prof_on.since, since, sizeof since);
            fprintf(s->out, " (turned on by this session at %s)", since);
        }
        fputc('\n', s->out);
    }
    const struct target_pause_stats *ps = target_pauses(s->target);
    fprintf(s->out, "pauses               %u stops of one thread: last %.0f us (thread %d), "
            "median %.0f us, p90 %.0f us, max %.0f us; %u unsafe threads skipped\n",
            ps->calls, ps->last_us, (int)ps->last_tid, ps->median_us, ps->p90_us,
            ps->max_us, ps->unsafe_retries);
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

/* ---- what the session changed ---- */

static void note_change(struct session_setting *st, uint64_t before, uint64_t now)
{
    if (!st->changed)
        st->before = before;
    st->now = now;
    st->changed = now != st->before;
}

static double monotonic_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Remember when the samples a dump can hold started to accrue (for the
 * hint on empty dumps): profiling turned on, or the counters reset. */
static void note_counting(struct session *s, bool counting)
{
    s->counting_since = counting ? monotonic_seconds() : 0;
}

/* Put back what the session changed, in one stop, and say so. */
static void changes_restore(struct session *s)
{
    struct session_changes *c = &s->changes;
    struct mallctl_call calls[3];
    size_t n = 0;
    size_t lg = c->rate.before;
    bool gdump = c->gdump.before, active = c->active.before;
    if (c->rate.changed)
        calls[n++] = (struct mallctl_call){.name = "prof.reset", .new = &lg, .newlen = sizeof lg};
    if (c->gdump.changed)
        calls[n++] = (struct mallctl_call){.name = "prof.gdump", .new = &gdump, .newlen = sizeof gdump};
    if (c->active.changed)
        calls[n++] = (struct mallctl_call){.name = "prof.active", .new = &active, .newlen = sizeof active};
    int pid = (int)target_pid(s->target);
    char what[256];
    int len = 0;
    for (size_t i = 0; i < n; i++) {
        char value[32];
        if (calls[i].new == &lg)
            snprintf(value, sizeof value, "2^%zu bytes (prof.lg_sample %zu)", lg, lg);
        else
            snprintf(value, sizeof value, "%s", *(const bool *)calls[i].new ? "true" : "false");
        len += snprintf(what + len, sizeof what - (size_t)len, "%s%s %s",
                        i ? ", " : "", calls[i].new == &lg ? "the sampling rate" : calls[i].name,
                        value);
        if (len >= (int)sizeof what)
            len = (int)sizeof what - 1;
    }
    if (run_calls(s, calls, n) == 0) {
        bool all = true;
        for (size_t i = 0; i < n; i++)
            all = all && calls[i].ret == 0;
        if (all) {
            fprintf(stderr, "memprof: the session ended on an error: put back what it "
                    "changed in process %d: %s, as before this session%s\n", pid, what,
                    c->rate.changed ? " (setting the rate reset the profile counters)" : "");
            *c = (struct session_changes){0};
            return;
        }
    }
    fprintf(stderr, "memprof: the session ended on an error and could not put back "
            "what it changed in process %d (%s): run memprof -p %d and set them "
            "again\n", pid, what, pid);
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
}

void control_session_end(struct session *s, bool failed)
{
    struct session_changes *c = &s->changes;
    recent_session_end(s);
    if (!s->target || !(c->active.changed || c->rate.changed || c->gdump.changed))
        return;
    if (failed)
        changes_restore(s);
    else
        changes_report(s);
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
    struct mallctl_call call = {
        .name = "prof.active", .old = &old, .oldlen = sizeof old,
        .new = &on, .newlen = sizeof on,
    };
    if (run_calls(s, &call, 1))
        return -1;
    if (call.ret)
        return mallctl_failed(s, "prof.active", call.ret, true);
    note_change(&s->changes.active, old, on);
    if (on != old)
        note_counting(s, on);
    prof_on_note(s, old, on);
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
    struct mallctl_call calls[] = {
        {.name = "prof.lg_sample", .old = &before, .oldlen = sizeof before},
        {.name = "prof.reset", .new = lg_sample, .newlen = lg_sample ? sizeof *lg_sample : 0},
    };
    if (run_calls(s, calls, 2))
        return -1;
    if (calls[1].ret)
        return mallctl_failed(s, "prof.reset", calls[1].ret, true);
    if (lg_sample && calls[0].ret == 0)
        note_change(&s->changes.rate, before, *lg_sample);
    note_counting(s, true);
    return 0;
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
    if (run_calls(s, calls, 5))
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
            command_error("%s. Use 'prof sample %zu --force' if the process can "
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
        command_error("sampling every 2^%zu bytes could add about %.0f%% to the "
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
        command_error("%s", usage);
        return -1;
    }
    if (control_profiling_possible(s) || run_owns_profiling(s, "prof"))
        return -1;
    if (on)
        return prof_set_active(s, true, json);
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
    char *end;
    unsigned long lg = strtoul(pos[1], &end, 10);
    if (*end || end == pos[1] || pos[1][0] == '-' || lg > 62) {
        command_error("'%s' is not a sample rate: give N from 0 to 62, meaning "
                      "one sample every 2^N bytes on average (default 19)", pos[1]);
        return -1;
    }
    size_t lgs = lg;
    if (control_owner_allows(s, "change its sampling rate (and reset its counters)", force) ||
        control_sample_check(s, lgs, force) || prof_reset(s, &lgs))
        return -1;
    if (json)
        return prof_json(s, "reset", true, "lg_sample", json_object_new_uint64(lg));
    char every[32];
    analysis_format_bytes((double)(UINT64_C(1) << lg), false, false, every, sizeof every);
    fprintf(s->out, "counters reset; sampling every 2^%lu bytes (%s) on average\n",
            lg, every);
    return 0;
}

/* Save a dump's bytes to a local file. */
static int save_file(const char *path, const char *data, size_t len)
{
    struct mp_error err;
    if (file_write_new(path, O_TRUNC, 0644, data, len, &err) == 0)
        return 0;
    command_error("%s", err.msg);
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
            return mallctl_failed(s, "prof.dump", info.mallctl_ret, true);
        command_error("%s", err.msg);
        return -1;
    }
    if (info.dir)
        command_status(s, "note: process %d dumped through the private directory %s, "
                       "removed at the end of the session (%s)\n",
                       (int)target_pid(s->target), info.dir, info.why_dir);
    return 0;
}

/* A dump without a single sample is not an answer: say what the rate in
 * force explains and what would get samples. */
static void explain_empty_dump(struct session *s, const struct session_dump *d)
{
    const struct profile *p = d->profile;
    if (p->nstacks > 0 && p->total.inuse_bytes > 0)
        return;
    char since[96] = "";
    if (s->counting_since > 0)
        snprintf(since, sizeof since, "; memprof turned profiling on (or reset "
                 "its counters) %.1f s ago", monotonic_seconds() - s->counting_since);
    if (p->period <= 1) {
        fprintf(stderr, "note: %s holds no allocation although every allocation is "
                "sampled%s: the process holds nothing it allocated since (a thread "
                "moves to a new rate only after its next sample at the old one); "
                "wait longer, and check 'info' says profiling is on\n", d->name, since);
        return;
    }
    unsigned lg = 0;
    while (lg < 63 && (UINT64_C(1) << (lg + 1)) <= p->period)
        lg++;
    char every[32];
    analysis_format_bytes((double)p->period, false, false, every, sizeof every);
    unsigned better = lg > 16 ? 16 : lg > 0 ? lg - 1 : 0;
    fprintf(stderr, "note: %s holds no sample: jemalloc samples about one allocation "
            "per 2^%u bytes (%s) allocated%s, and the process has not allocated that "
            "much (still held) since.  Wait longer before 'dump', or sample more "
            "often with 'prof sample %u' (resets the counters; costs the process "
            "some memory)\n", d->name, lg, every,
            since[0] ? since : "; this session did not turn profiling on (if "
            "'info' says it is off, 'prof on' first)", better);
}

struct session_dump *control_dump_add(struct session *s, const char *data, size_t len,
                                      const char *name, const char *file)
{
    if (file && save_file(file, data, len))
        return NULL;
    char source[64];
    snprintf(source, sizeof source, "pid %d", (int)target_pid(s->target));
    struct mp_error err;
    struct profile *p = profile_parse(data, len, file ? file : source, &err);
    if (!p) {
        command_error("the process wrote a profile memprof cannot read: %s", err.msg);
        return NULL;
    }
    /* jemalloc copies /proc/<its pid>/maps into the dump, which reads empty
     * once the main thread has exited (pthread_exit); the live process's
     * mappings, read through a live thread, are the same. */
    struct mp_error ignored;
    if (p->maps.n == 0)
        maps_read_pid(target_pid(s->target), &p->maps, &ignored);
    /* The objects' build-ids now, while they are the ones the process runs,
     * so that a reading after a rebuild can tell (FILE.buildids). */
    p->taken_at = time(NULL);
    struct symbolizer *sym = session_symbolizer(s);
    if (!sym || analysis_record_objects(sym, p)) {
        profile_free(p);
        command_error("out of memory");
        return NULL;
    }
    if (file && p->nobject_ids && profile_save_object_ids(p, file, &err)) {
        fprintf(stderr, "warning: %s; a later reading of %s cannot check its "
                "objects' build-ids\n", err.msg, file);
    }
    struct session_dump *d = session_add_dump(s, p, name, source);
    if (!d) {
        profile_free(p);
        command_error("out of memory");
        return NULL;
    }
    if (file)
        d->saved_path = strdup(file);
    if (session_dump_keep_raw(d, data, len))
        command_status(s, "note: out of memory keeping %s's bytes: 'profile save' "
                       "cannot write it\n", d->name);
    if (s->prof_on.since && !s->prof_on.dumped) {
        char since[64];
        since_text(s->prof_on.since, since, sizeof since);
        command_status(s, "note: %s covers only the allocations sampled since this "
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
    struct session_dump *d = control_dump_take(s, name, file);
    if (!d)
        return -1;
    if (opts[1].given) {
        json_object *j = json_answer_new();
        json_object_object_add(j, "dump", json_dump(d));
        return json_answer_emit(s, j);
    }
    char total[32];
    const struct profile *p = d->profile;
    analysis_format_bytes(p->total.inuse_bytes, false, false, total, sizeof total);
    fprintf(s->out, "%s: %zu stacks, %s in use%s%s\n", d->name, p->nstacks, total,
            file ? ", saved to " : "", file ? file : "");
    explain_empty_dump(s, d);
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
        command_error("'mallctl prof.dump' without a value would make the process "
                      "write a profile into its working directory: use 'dump' (or "
                      "'mallctl prof.dump PATH' for a file of your choosing in the "
                      "process's filesystem)");
    else if (strcmp(name, "prof.reset") == 0)
        command_error("'mallctl prof.reset' without a value would reset the profile "
                      "counters: use 'prof reset' (or 'prof sample N' to change the "
                      "rate too)");
    else
        command_error("%s is write-only: jemalloc has nothing to read there; write it "
                      "with 'mallctl %s VALUE' (a %s; a value starting with '-' goes "
                      "after '--')", name, name, mallctl_type_name(info->write_type));
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
        if (strcmp(name, run_owned[i]) == 0 && run_owns_profiling(s, "mallctl"))
            return -1;
    if (strcmp(name, "prof.reset") == 0)
        return control_owner_allows(s, "reset its counters or change its rate", force);
    if (strcmp(name, "prof.active") == 0 && !*(const bool *)newv)
        return control_owner_allows(s, "turn it off", force);
    /* as 'prof on': jemalloc 5.1 takes it without opt.prof, samples nothing */
    if (strcmp(name, "prof.active") == 0)
        return control_profiling_possible(s);
    return 0;
}

/* Keep track of what a write through mallctl changed. */
static void mallctl_note_change(struct session *s, const char *name, const void *oldv,
                                const void *newv, const size_t *lg_before, int lg_ret)
{
    if (strcmp(name, "prof.active") == 0) {
        note_change(&s->changes.active, *(const bool *)oldv, *(const bool *)newv);
        if (*(const bool *)oldv != *(const bool *)newv)
            note_counting(s, *(const bool *)newv);
        prof_on_note(s, *(const bool *)oldv, *(const bool *)newv);
    } else if (strcmp(name, "prof.gdump") == 0)
        note_change(&s->changes.gdump, *(const bool *)oldv, *(const bool *)newv);
    else if (strcmp(name, "prof.reset") == 0 && lg_ret == 0)
        note_change(&s->changes.rate, *lg_before, *(const size_t *)newv);
    if (strcmp(name, "prof.reset") == 0)
        note_counting(s, true);
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
        command_error("'mallctl %s' needs a process: attach to one first", name);
        return -1;
    }
    struct mp_error err;
    const struct mallctl_info *info = mallctl_lookup(name);
    struct mallctl_info guessed;
    enum mallctl_type t;
    if (type && mallctl_type_parse(type, &t, &err)) {
        command_error("%s", err.msg);
        return -1;
    }
    if (info && type && t != info->type && t != info->write_type) {
        command_error("%s has type %s (jemalloc(3)), not %s: leave --type out", name,
                      mallctl_type_name(info->type), type);
        return -1;
    }
    if (!info && !type) {
        command_error("memprof does not know the type of '%s' (it is not in %s's "
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
        command_error("%s is an action and takes no value", name);
        return -1;
    }
    bool needs_force;
    const char *effect = mallctl_side_effect(name, &needs_force);
    if (effect && needs_force && !force) {
        command_error("%s %s: add --force if that is what you want", name, effect);
        return -1;
    }
    if (!value && info->access == MALLCTL_W)
        return refuse_bare_write(name, info);
    enum mallctl_type wt = info->write_type;
    union { bool b; uint64_t u64; char pad[8]; } newv = {0}, oldv = {0};
    size_t newlen = 0;
    if (value && wt != MALLCTL_STRING && mallctl_value_parse(wt, value, &newv, &newlen, &err)) {
        command_error("%s: %s", name, err.msg);
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
    if (run_calls_as(s, calls, n, info == &guessed ? info : NULL))
        return -1;
    if (stats && calls[0].ret)
        return mallctl_failed(s, "epoch", calls[0].ret, true);
    if (call->ret)
        return mallctl_failed(s, name, call->ret, value != NULL);
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
