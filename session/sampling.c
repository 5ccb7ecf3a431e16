/* sampling.c - owns the session's use of memprof's heap sampler: when it
 * stands in for an allocator's own profiler, what 'prof' and 'dump' say
 * with it, and taking it out at every end of the session. */
#include "session/sampling.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attach/proc_fate.h"
#include "lib/analysis/analysis.h"
#include "session/control.h"
#include "session/json_answer.h"
#include "session/process_container.h"
#include "lib/base/multiarch.h"
#include "lib/base/text_escape.h"
#include "session/say.h"

#define DEFAULT_LG 19u      /* as jemalloc's lg_prof_sample: 512 KiB */

void sampling_attach(struct session *s)
{
    sampler_free(s->sampler);
    s->sampler = sampler_new();
    if (!s->sampler)
        return;
    char note[512];
    struct mp_error err;
    int found = sampler_sweep(s->sampler, s->target, note, sizeof note, &err);
    if (found > 0)
        fprintf(stderr, "note: %s\n", note);
    else if (found < 0)
        fprintf(stderr, "warning: could not look for a sampler an earlier memprof left "
                "in process %d: %s\n", (int)target_pid(s->target), err.msg);
}

bool sampling_applies(struct session *s)
{
    if (!s->target || !s->sampler)
        return false;
    if (s->alloc.kind != ALLOCATOR_JEMALLOC)
        return true;
    /* A jemalloc linked into the program (Rust's _rjem_) is called
     * directly, not through a call table: only its own profiler can see
     * those allocations. */
    const struct jemalloc_copy *c = control_selected_copy(s);
    if (!c || c->static_copy || control_prof_conf_read(s))
        return false;
    return !(s->prof_conf.config_prof && s->prof_conf.opt_prof) ||
           s->prof_conf.own_profiler_blind;
}

void sampling_reason(struct session *s, char *buf, size_t len)
{
    if (s->alloc.kind != ALLOCATOR_JEMALLOC) {
        snprintf(buf, len, "its allocator is %s, which has no heap profiler memprof "
                 "can turn on", allocator_kind_name(s->alloc.kind));
        return;
    }
    if (!s->prof_conf.own_profiler_blind) {
        snprintf(buf, len, "its jemalloc was started without profiling (%s)",
                 s->prof_conf.config_prof ? "opt.prof is false" : "config.prof is false");
        return;
    }
    char v[64];
    jemalloc_version_text(&s->prof_conf.version, v, sizeof v);
    snprintf(buf, len, "its jemalloc %s cannot profile it from now on: %s", v,
             jemalloc_inactive_threads_text);
}

bool sampling_possible(struct session *s, char *why, size_t len)
{
    why[0] = 0;
    return sampling_applies(s) && !sampler_refusal(s->target, &s->alloc, why, len);
}

enum sampling_verdict sampling_verdict(struct session *s, bool judge, int *nfilters,
                                       char *why, size_t len)
{
    *nfilters = -1;
    if (!sampling_possible(s, why, len))
        return SAMPLING_NO;
    enum seccomp_known k = sampler_filter_known(s->sampler, s->target, nfilters, why, len);
    if (k == SECCOMP_KNOWN_UNJUDGED && judge)
        return sampler_filter_refusal(s->sampler, s->target, why, len) ? SAMPLING_NO
                                                                       : SAMPLING_YES;
    if (k == SECCOMP_KNOWN_UNJUDGED) {
        char n[32] = "";
        if (*nfilters > 0)
            snprintf(n, sizeof n, " (%d)", *nfilters);
        snprintf(why, len, "process %d runs under seccomp filters%s: whether they let the "
                 "sampler's system calls through is judged when the sampler is asked for, "
                 "by reading them in a stop of one thread", (int)target_pid(s->target), n);
        return SAMPLING_UNJUDGED;
    }
    return k == SECCOMP_KNOWN_REFUSES ? SAMPLING_NO : SAMPLING_YES;
}

int sampling_require(struct session *s)
{
    char why[768];
    if (sampling_possible(s, why, sizeof why) &&
        !sampler_filter_refusal(s->sampler, s->target, why, sizeof why))
        return 0;
    char text[2048];
    sampling_why_not_text(s, why, text, sizeof text);
    say_error("no heap profile of process %d without a restart: %s",
              (int)target_pid(s->target), text);
    return -1;
}

/* Still the program memprof put its sampler into?  When it exec'd or
 * exited, the sampler went with it: forget it and say so (-1). */
static int same_program(struct session *s)
{
    enum proc_fate fate = target_fate(s->target);
    if (fate == PROC_SAME)
        return 0;
    bool was_on = sampler_is_on(s->sampler);
    sampler_forget(s->sampler);
    struct mp_error err;
    proc_fate_error(target_pid(s->target), fate,
                    was_on ? "since memprof's sampler went in (it went with the old program)"
                           : "since memprof attached", &err);
    say_error("%s", err.msg);
    return -1;
}

void sampling_restart_advice(struct session *s, char *buf, size_t len)
{
    const struct allocator_id *a = &s->alloc;
    bool secure = s->target && target_secure_exec(s->target);
    if (a->kind == ALLOCATOR_JEMALLOC) {
        char var[64];
        control_conf_var(s, var, sizeof var);
        if (secure)
            snprintf(buf, len, "put prof:true,prof_active:false in /etc/malloc.conf and "
                     "restart it (it runs in secure-execution mode, where jemalloc "
                     "ignores %s)", var);
        else
            snprintf(buf, len, "restart it with %s=prof:true,prof_active:false", var);
    } else if (a->malloc_linked_in)
        snprintf(buf, len, "rebuild it with a profiling allocator (jemalloc with "
                 "profiling, started with MALLOC_CONF=prof:true,prof_active:false): "
                 "LD_PRELOAD cannot reach calls linked into the executable");
    else if (secure)
        snprintf(buf, len, "list libjemalloc in /etc/ld.so.preload, put "
                 "prof:true,prof_active:false in /etc/malloc.conf and restart it (it "
                 "runs in secure-execution mode, where LD_PRELOAD and MALLOC_CONF are "
                 "ignored)");
    else
        snprintf(buf, len, "restart it with LD_PRELOAD=/usr/lib/" MEMPROF_MULTIARCH
                 "/libjemalloc.so.2 MALLOC_CONF=prof:true,prof_active:false"
                 MEMPROF_JEMALLOC_PROF_NOTE " (or link it with jemalloc)");
}

/* What lets the sampler in where the process's seccomp filter denies one
 * of its own calls (why is that refusal), for the runtime that gave the
 * filter: "" when why is another refusal.  Docker's default profile and
 * containerd's (Kubernetes' RuntimeDefault there) let process_vm_readv
 * through only for a container with CAP_SYS_PTRACE (docs/containers.md). */
static void filter_remedy(struct session *s, const char *why, char *buf, size_t len)
{
    buf[0] = 0;
    const char *call = s->sampler ? sampler_filter_denied_call(s->sampler, why) : NULL;
    if (!call)
        return;
    struct process_container *c = malloc(sizeof *c);
    if (!c)
        return;
    char dir[96];
    target_proc_dir(s->target, dir, sizeof dir);
    process_container_read(dir, c);
    bool ptrace_rule = strcmp(call, "process_vm_readv") == 0;
    if (c->ref.pod_uid[0])
        snprintf(buf, len, "restart its pod with %s a Localhost seccomp profile "
                 "(securityContext.seccompProfile) that allows %s, or ",
                 ptrace_rule ? "SYS_PTRACE in the container's securityContext.capabilities.add "
                 "(containerd's default seccomp profile, RuntimeDefault there, lets "
                 "process_vm_readv through for a container with CAP_SYS_PTRACE) or with" :
                 "the container under", call);
    else if (c->ref.runtime == CONTAINER_DOCKER)
        snprintf(buf, len, "restart its container with %sa seccomp profile "
                 "(--security-opt seccomp=FILE) that allows %s, or ",
                 ptrace_rule ? "--cap-add SYS_PTRACE (Docker's default seccomp profile lets "
                 "process_vm_readv through for a container with CAP_SYS_PTRACE) or with " : "",
                 call);
    else if (c->ref.runtime == CONTAINER_CONTAINERD)
        snprintf(buf, len, "restart its container with %sa seccomp profile that allows %s, "
                 "or ", ptrace_rule ? "the capability SYS_PTRACE (containerd's default "
                 "seccomp profile lets process_vm_readv through for a container with "
                 "CAP_SYS_PTRACE) or with " : "", call);
    else
        snprintf(buf, len, "restart it under a seccomp filter that allows %s, or ", call);
    free(c);
}

void sampling_why_not_text(struct session *s, const char *why, char *buf, size_t len)
{
    char restart[512], remedy[512];
    sampling_restart_advice(s, restart, sizeof restart);
    filter_remedy(s, why, remedy, sizeof remedy);
    snprintf(buf, len, "%s; to profile it, %s%s", why, remedy, restart);
}

/* The sampler cannot go in: say why, and what would profile it instead. */
static int refuse(struct session *s, const char *why)
{
    char var[64];
    if (s->alloc.kind == ALLOCATOR_JEMALLOC && s->prof_conf.own_profiler_blind) {
        char v[64];
        control_conf_var(s, var, sizeof var);
        jemalloc_version_text(&s->prof_conf.version, v, sizeof v);
        say_error("prof: %s; and its jemalloc %s cannot profile it either: %s. To "
                  "profile it, restart it with %s=prof:true (profiling active from "
                  "its start), or give it jemalloc 5.3", why, v,
                  jemalloc_inactive_threads_text, var);
        return -1;
    }
    char restart[512], remedy[512];
    sampling_restart_advice(s, restart, sizeof restart);
    filter_remedy(s, why, remedy, sizeof remedy);
    if (s->alloc.kind == ALLOCATOR_JEMALLOC)
        say_error("prof: %s. To profile it, %s%s", why, remedy, restart);
    else
        say_error("prof: %s. To profile it, %s%s; memprof can still run %s here", why,
                  remedy, restart, control_what_works(s->alloc.kind));
    return -1;
}

static void every_text(unsigned lg, char *buf, size_t len)
{
    char b[32];
    analysis_format_bytes((double)(UINT64_C(1) << lg), false, false, b, sizeof b);
    snprintf(buf, len, "every 2^%u bytes (%s) on average", lg, b);
}

static int answer_json(struct session *s, bool active, bool was, unsigned lg)
{
    json_object *j = json_answer_new();
    json_object_object_add(j, "prof_active", json_object_new_boolean(active));
    json_object_object_add(j, "was", json_object_new_boolean(was));
    json_object_object_add(j, "profiler", json_object_new_string("memprof-sampler"));
    json_object_object_add(j, "lg_sample", json_object_new_uint64(lg));
    return json_answer_emit(s, j);
}

/* The sampler in, at rate lg.  0, or -1 after saying why. */
static int put_in(struct session *s, unsigned lg, struct sampler_on_report *rep)
{
    char why[768];
    if (sampler_refusal(s->target, &s->alloc, why, sizeof why) ||
        sampler_filter_refusal(s->sampler, s->target, why, sizeof why))
        return refuse(s, why);
    struct mp_error err;
    sampler_set_mappings_only(s->sampler, false);
    if (sampler_on(s->sampler, s->target, &s->alloc, lg, rep, &err) < 0) {
        if (target_calls_refused(s->target) || target_must_exit(s->target))
            return control_call_failed(s, &err);
        say_error("prof: %s", err.msg);
        return -1;
    }
    s->prof_on = (struct session_prof_on){.since = time(NULL)};
    control_note_counting(s, true);
    return 0;
}

/* Objects with code but no call-frame information, by name: stacks that
 * pass through them stop there. */
static void no_cfi_note(struct session *s, const struct sampler_on_report *rep)
{
    char names[SAMPLER_NO_CFI_NAMED * (TEXT_ESCAPE_BUF + 4)] = "";
    size_t named = rep->no_cfi < SAMPLER_NO_CFI_NAMED ? rep->no_cfi : SAMPLER_NO_CFI_NAMED;
    for (size_t i = 0; i < named; i++) {
        char eb[TEXT_ESCAPE_BUF];
        size_t used = strlen(names);
        snprintf(names + used, sizeof names - used, "%s%s",
                 i == 0 ? "" : i + 1 == named && named == rep->no_cfi ? " and " : ", ",
                 text_escape(rep->no_cfi_names[i], eb, sizeof eb));
    }
    char more[64] = "";
    if (rep->no_cfi > named)
        snprintf(more, sizeof more, " and %zu more", rep->no_cfi - named);
    say_status(s, "note: %s%s %s code of %s own but no call-frame information memprof "
               "could read: stacks that pass through %s stop at %s code\n", names, more,
               rep->no_cfi == 1 ? "has" : "have", rep->no_cfi == 1 ? "its" : "their",
               rep->no_cfi == 1 ? "it" : "them", rep->no_cfi == 1 ? "its" : "their");
}

static int turn_on(struct session *s, unsigned lg, bool json, const char *what)
{
    struct sampler_on_report rep;
    if (put_in(s, lg, &rep))
        return -1;
    if (json)
        return answer_json(s, true, false, lg);
    char every[64];
    every_text(lg, every, sizeof every);
    fprintf(s->out, "%s: memprof's sampler is in process %d, sampling %s\n", what,
            (int)target_pid(s->target), every);
    say_status(s, "sampler: %zu call-table slot%s in %zu object%s point at it%s; %zu "
               "unwind rows (%.0f ms to build); the process made its region in one "
               "stop of one thread, held %.0f us (%.1f ms with memprof's choice of the "
               "thread)%s\n", rep.slots, rep.slots == 1 ? "" : "s", rep.objects,
               rep.objects == 1 ? "" : "s",
               rep.skipped ? " (some slots held another function and were left)" : "",
               rep.rows, rep.build_ms, rep.stop_us, rep.stop_wall_ms,
               rep.reused ? ", reusing its stand-ins' page" : "");
    if (rep.no_cfi)
        no_cfi_note(s, &rep);
    if (sampler_probes_by_sigmask(s->sampler))
        say_status(s, "note: process %d's seccomp filter denies process_vm_readv: the "
                   "sampler checks a stack page readable with rt_sigprocmask instead (one "
                   "call a page, changing nothing)\n", (int)target_pid(s->target));
    return 0;
}

/* The sampler's body stays when a thread was still inside it. */
static void say_kept(struct session *s)
{
    uint64_t kept = sampler_kept_bytes(s->sampler);
    if (kept)
        fprintf(stderr, "note: a thread of process %d was still inside memprof's sampler "
                "(a call to the allocator that had not returned in 3 s), so its body "
                "(%" PRIu64 " KiB, no longer entered) stays mapped; the next 'prof on' or "
                "memprof session unmaps it\n", (int)target_pid(s->target), kept / 1024);
}

/* Out of the process: the slots back.  0, or -1 after saying why. */
static int take_out(struct session *s, long *restored)
{
    struct mp_error err;
    *restored = sampler_off(s->sampler, s->target, &err);
    if (*restored < 0) {
        say_error("%s; 'prof off' tries again", err.msg);
        return -1;
    }
    s->prof_on = (struct session_prof_on){.off_since = time(NULL)};
    control_note_counting(s, false);
    say_kept(s);
    return 0;
}

int sampling_prof_on(struct session *s, bool json)
{
    if (same_program(s))
        return -1;
    unsigned lg = sampler_lg_sample(s->sampler);
    if (sampler_is_on(s->sampler)) {
        if (json)
            return answer_json(s, true, true, lg);
        fprintf(s->out, "profiling is already on (memprof's sampler is in process %d)\n",
                (int)target_pid(s->target));
        return 0;
    }
    return turn_on(s, lg, json, "profiling is now on (was off)");
}

int sampling_prof_off(struct session *s, bool json)
{
    if (same_program(s))
        return -1;
    bool was = sampler_is_on(s->sampler);
    long restored = 0;
    if (was && take_out(s, &restored))
        return -1;
    if (json)
        return answer_json(s, false, was, sampler_lg_sample(s->sampler));
    if (!was)
        fprintf(s->out, "profiling is off (memprof's sampler is not in process %d)\n",
                (int)target_pid(s->target));
    else
        fprintf(s->out, "profiling is now off (was on): memprof's sampler is out of process "
                "%d, its %ld call-table slot%s put back\n", (int)target_pid(s->target),
                restored, restored == 1 ? "" : "s");
    return 0;
}

/* A new rate, or the same one again: like jemalloc's prof.reset, the
 * samples so far are forgotten (they were taken at another rate). */
static int restart(struct session *s, unsigned lg, bool json)
{
    long restored;
    if (same_program(s))
        return -1;
    if (!sampler_is_on(s->sampler)) {
        struct mp_error err;
        sampler_set_rate(s->sampler, s->target, lg, &err);
        if (json)
            return answer_json(s, false, false, lg);
        char every[64];
        every_text(lg, every, sizeof every);
        fprintf(s->out, "sampling %s once 'prof on' puts memprof's sampler in\n", every);
        return 0;
    }
    if (take_out(s, &restored))
        return -1;
    return turn_on(s, lg, json, "samples forgotten (counters reset)");
}

int sampling_run_on(struct session *s, unsigned lg)
{
    struct sampler_on_report rep;
    long restored;
    if (sampler_is_on(s->sampler) && sampler_lg_sample(s->sampler) == lg)
        return 0;
    if (sampler_is_on(s->sampler) && take_out(s, &restored))
        return -1;
    return put_in(s, lg, &rep);
}

int sampling_run_restore(struct session *s, bool was_on, unsigned lg_before)
{
    long restored;
    if (!was_on) {
        if (sampler_is_on(s->sampler) && take_out(s, &restored))
            return -1;
        struct mp_error ignored;
        sampler_set_rate(s->sampler, s->target, lg_before, &ignored);
        return 0;
    }
    return sampling_run_on(s, lg_before);
}

int sampling_prof_rate(struct session *s, unsigned lg, bool json)
{
    return restart(s, lg, json);
}

int sampling_prof_reset(struct session *s, bool json)
{
    return restart(s, sampler_lg_sample(s->sampler), json);
}

struct session_dump *sampling_dump(struct session *s, const char *name, const char *file)
{
    if (same_program(s))
        return NULL;
    if (!sampler_is_on(s->sampler)) {
        char why[768];
        if (sampler_refusal(s->target, &s->alloc, why, sizeof why) ||
            sampler_filter_refusal(s->sampler, s->target, why, sizeof why))
            refuse(s, why);
        else
            say_error("dump: memprof's sampler is not in process %d, so there is no heap "
                      "profile to take: 'prof on' puts it in (sampling from then on), "
                      "then 'dump'", (int)target_pid(s->target));
        return NULL;
    }
    char *data;
    size_t len;
    struct sampler_dump_info info;
    struct mp_error err;
    if (sampler_dump(s->sampler, s->target, &data, &len, &info, &err) < 0) {
        say_error("dump: %s", err.msg);
        return NULL;
    }
    struct session_dump *d = control_dump_add(s, data, len, name, file);
    free(data);
    if (!d)
        return NULL;
    s->sampler_dumped = info;
    if (info.orphaned)
        fprintf(stderr, "warning: the sampler in process %d had stopped sampling: it "
                "lost track of this memprof (its watch pipe was closed, by the program "
                "closing descriptors it does not own?); 'prof reset' puts it back\n",
                (int)target_pid(s->target));
    if (info.dropped)
        fprintf(stderr, "warning: the sampler left out %" PRIu64 " sample%s (its tables "
                "hold %u live heap samples and %u mapping samples at most): this profile "
                "undercounts; a larger 'prof sample N' samples less often\n", info.dropped,
                info.dropped == 1 ? "" : "s", info.live_max, info.maps_max);
    if (info.truncated)
        say_status(s, "note: %" PRIu64 " of %" PRIu64 " samples have a stack cut short "
                   "(code without call-frame information)\n", info.truncated, info.samples);
    return d;
}

/* ---- mappings alone, beside jemalloc's own profiler ------------------- */

/* Where memprof's sampler serves 'prof' (sampling_applies) it follows
 * mappings with the heap already: --mappings is for the other case. */
static bool mappings_need_own_profiler(struct session *s, const char *what)
{
    if (!sampling_applies(s))
        return false;
    say_error("%s --mappings: in process %d memprof's sampler serves 'prof' and follows "
              "mappings (mmap, munmap, mremap, sbrk, brk) with the heap: 'prof on' and "
              "'dump' take both", what, (int)target_pid(s->target));
    return true;
}

int sampling_mappings_on(struct session *s, bool json)
{
    if (mappings_need_own_profiler(s, "prof on") || same_program(s))
        return -1;
    unsigned lg = sampler_lg_sample(s->sampler);
    bool was = sampler_is_on(s->sampler);
    if (!was) {
        char why[768];
        if (sampler_refusal(s->target, &s->alloc, why, sizeof why) ||
            sampler_filter_refusal(s->sampler, s->target, why, sizeof why)) {
            say_error("prof on --mappings: %s", why);
            return -1;
        }
        struct sampler_on_report rep;
        struct mp_error err;
        sampler_set_mappings_only(s->sampler, true);
        if (sampler_on(s->sampler, s->target, &s->alloc, lg, &rep, &err) < 0) {
            if (target_calls_refused(s->target) || target_must_exit(s->target))
                return control_call_failed(s, &err);
            say_error("prof on --mappings: %s", err.msg);
            return -1;
        }
        say_status(s, "sampler: %zu call-table slot%s of mmap, munmap, mremap, sbrk and brk "
                   "in %zu object%s point at it (none of the allocator's own)\n", rep.slots,
                   rep.slots == 1 ? "" : "s", rep.objects, rep.objects == 1 ? "" : "s");
    }
    if (json)
        return answer_json(s, true, was, lg);
    char every[64];
    every_text(lg, every, sizeof every);
    fprintf(s->out, "mappings are %sfollowed: memprof's sampler is in process %d for "
            "mmap, munmap, mremap, sbrk and brk alone, sampling %s, beside its allocator's own "
            "profiler ('prof on' and 'dump' as before; 'dump --mappings' takes the "
            "mappings)\n", was ? "already " : "now ", (int)target_pid(s->target), every);
    return 0;
}

int sampling_mappings_off(struct session *s, bool json)
{
    if (mappings_need_own_profiler(s, "prof off") || same_program(s))
        return -1;
    bool was = sampler_is_on(s->sampler);
    long restored = 0;
    if (was) {
        struct mp_error err;
        restored = sampler_off(s->sampler, s->target, &err);
        if (restored < 0) {
            say_error("%s; 'prof off --mappings' tries again", err.msg);
            return -1;
        }
        say_kept(s);
    }
    if (json)
        return answer_json(s, false, was, sampler_lg_sample(s->sampler));
    if (!was)
        fprintf(s->out, "mappings are not followed (memprof's sampler is not in process "
                "%d)\n", (int)target_pid(s->target));
    else
        fprintf(s->out, "mappings are no longer followed: memprof's sampler is out of "
                "process %d, its %ld call-table slot%s put back\n",
                (int)target_pid(s->target), restored, restored == 1 ? "" : "s");
    return 0;
}

struct session_dump *sampling_mappings_dump(struct session *s, const char *name,
                                            const char *file)
{
    if (mappings_need_own_profiler(s, "dump"))
        return NULL;
    if (!sampler_is_on(s->sampler)) {
        say_error("dump --mappings: memprof's sampler does not follow the mappings of "
                  "process %d: 'prof on --mappings' puts it in (following them from then "
                  "on), then 'dump --mappings'", (int)target_pid(s->target));
        return NULL;
    }
    return sampling_dump(s, name, file);
}

void sampling_state_text(struct session *s, char *buf, size_t len)
{
    if (!s->sampler || !s->target) {
        snprintf(buf, len, "not in this process");
        return;
    }
    if (target_fate(s->target) != PROC_SAME) {
        sampler_forget(s->sampler);
        snprintf(buf, len, "off (the process is no longer the program it went into)");
        return;
    }
    char every[64];
    every_text(sampler_lg_sample(s->sampler), every, sizeof every);
    int64_t from = sampler_inherited_from(s->sampler);
    if (from && !sampler_is_on(s->sampler))
        snprintf(buf, len, "off, %s; this process holds the sampler's stand-ins' page "
                 "(8 KiB) inherited from process %lld by fork: its slots were put back "
                 "when memprof attached, and the page stays mapped, inert, passing calls "
                 "straight through, until the process exits or executes a program "
                 "('prof on' reuses it)", every, (long long)from);
    else
        snprintf(buf, len, "%s, %s", !sampler_is_on(s->sampler) ? "off" :
                 sampler_mappings_only(s->sampler) ? "on for mappings alone (mmap, munmap, "
                 "mremap, sbrk, brk), beside the allocator's own profiler" : "on", every);
}

void sampling_session_end(struct session *s)
{
    if (!s->target || !sampler_is_on(s->sampler))
        return;
    enum proc_fate fate = target_fate(s->target);
    if (fate != PROC_SAME) {
        sampler_free(s->sampler);     /* gone with the program */
        s->sampler = NULL;
        return;
    }
    struct mp_error err;
    long restored = sampler_off(s->sampler, s->target, &err);
    if (restored < 0)
        fprintf(stderr, "memprof: %s; the sampler in process %d passes them through and "
                "stops sampling on its own now that memprof is leaving; the next "
                "'memprof -p %d' puts them back\n", err.msg, (int)target_pid(s->target),
                (int)target_pid(s->target));
    else {
        say_status(s, "memprof took its sampler out of process %d: %ld call-table slot%s "
                   "put back\n", (int)target_pid(s->target), restored,
                   restored == 1 ? "" : "s");
        say_kept(s);
    }
}
