/* seccomp_check.c - owns the sampler's seccomp decision
 * (seccomp_check.h): which system calls, with which arguments, the
 * filters must let through, and the sentence that refuses when one is not.
 *
 * The calls are those of inproc/arch_<cpu>.h's ARCH_SYS_* list (the only
 * ones the image makes: tools/embed_image.py checks it) and of the stop
 * that puts the sampler in (sampler.c: map_region, make_watch), with the
 * C library's wrappers' arguments.  test_seccomp checks this list against
 * the image's. */
#include "allocator/sampler/seccomp_check.h"

#include <errno.h>
#include <linux/audit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include "attach/preflight.h"
#include "attach/seccomp_filters.h"

#if defined(__x86_64__)
#define THIS_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define THIS_AUDIT_ARCH AUDIT_ARCH_AARCH64
#else
#error "memprof's sampler knows the audit arch of x86-64 and arm64 only"
#endif

#define A(i) SECCOMP_FIELD_ARG(i)

/* Where a call is made, and so what the filter may do to it. */
enum call_when {
    SAMPLER,        /* by the sampler, in any thread, memprof holding none */
    PROBE_VM,       /* as SAMPLER, where the walk checks pages with
                     * process_vm_readv (SAMPLER_PROBE_VM_READV) */
    PROBE_SIGMASK,  /* as SAMPLER, where it checks them with rt_sigprocmask */
    RESTORE,        /* a held thread restoring itself if memprof dies */
    STOP,           /* in the stop that puts the sampler in: unheld only if
                     * memprof dies during it; a failure is harmless then */
};

struct judged {
    const char *name;
    long nr;
    uint64_t args[6];
    unsigned known;            /* arguments memprof knows (SECCOMP_FIELD_ARG) */
    enum call_when when;
    const char *what;          /* what the call is for */
};

/* Argument 0 of process_vm_readv is the process's own pid: filled in. */
#define TGID_ARG 0xffffffffffffffffull

static const struct judged calls[] = {
    { "ppoll", SYS_ppoll, {0, 1, 0, 0, 8, 0}, A(1) | A(3) | A(4) | A(5), SAMPLER,
      "to see whether memprof is still there" },
    { "process_vm_readv", SYS_process_vm_readv, {TGID_ARG, 0, 4, 0, 4, 0},
      A(2) | A(4) | A(5), PROBE_VM, "to read a stack without faulting" },
    { "rt_sigprocmask", SYS_rt_sigprocmask, {3 /* no `how` */, 0, 0, 8, 0, 0},
      A(0) | A(2) | A(3) | A(4) | A(5), PROBE_SIGMASK,
      "to read a stack without faulting, where process_vm_readv is denied" },
    { "rt_sigreturn", SYS_rt_sigreturn, {0}, 0, RESTORE,
      "by which a thread memprof holds restores itself if memprof dies" },
    { "memfd_create", SYS_memfd_create, {0, 1}, A(1), STOP, "" },
    { "mmap", SYS_mmap, {0, 0, 5 /* PROT_READ|PROT_EXEC */, 2 /* MAP_PRIVATE */, 0, 0},
      A(0) | A(2) | A(3) | A(5), STOP, "" },
    { "mprotect", SYS_mprotect, {0, 0, 3 /* PROT_READ|PROT_WRITE */}, A(2), STOP, "" },
    { "close", SYS_close, {0}, 0, STOP, "" },
    { "pipe2", SYS_pipe2, {0, 02000000 /* O_CLOEXEC */, 0, 0, 0, 0},
      A(1) | A(2) | A(3) | A(4) | A(5), STOP, "" },
    { "fstat", SYS_fstat, {0}, A(2) | A(3) | A(4) | A(5), STOP, "" },
    /* the gate's data page and the body's data, over the code mapping's tail */
    { "mmap", SYS_mmap, {0, 0, 3, 0x32 /* MAP_PRIVATE|MAP_ANONYMOUS|MAP_FIXED */,
      (uint64_t)-1, 0}, A(2) | A(3) | A(4) | A(5), STOP, "" },
    { "madvise", SYS_madvise, {0, 0, 18 /* MADV_WIPEONFORK: the gate's data */}, A(2),
      STOP, "" },
    { "madvise", SYS_madvise, {0, 0, 10 /* MADV_DONTFORK: the body */}, A(2), STOP, "" },
    { "munmap", SYS_munmap, {0, 0}, 0, STOP, "" },
};
#define NCALLS (sizeof calls / sizeof calls[0])

size_t sampler_seccomp_ncalls(void)
{
    return NCALLS;
}

const char *sampler_seccomp_call(size_t i, long tgid, struct seccomp_call *c, bool *must_allow)
{
    const struct judged *j = &calls[i];
    memset(c, 0, sizeof *c);
    c->nr = (int32_t)j->nr;           /* the native number: no x32 bit */
    c->arch = THIS_AUDIT_ARCH;
    memcpy(c->args, j->args, sizeof c->args);
    c->known = SECCOMP_FIELD_NR | SECCOMP_FIELD_ARCH | j->known;
    if (j->args[0] == TGID_ARG) {
        c->args[0] = (uint64_t)tgid;
        if (tgid > 0)
            c->known |= A(0);
    }
    *must_allow = j->when != STOP;
    return j->name;
}

/* Whether call i is judged when the walk checks pages the way way. */
static bool judged_for(const struct judged *j, enum sampler_probe way)
{
    if (j->when == PROBE_VM)
        return way == SAMPLER_PROBE_VM_READV;
    if (j->when == PROBE_SIGMASK)
        return way == SAMPLER_PROBE_SIGMASK;
    return true;
}

/* All filters on one call, as the kernel combines them. */
static void run_all(const struct seccomp_insn *const *progs, const size_t *lens, size_t n,
                    const struct seccomp_call *c, struct seccomp_outcome *out)
{
    memset(out, 0, sizeof *out);
    out->ret = SECCOMP_ACT_ALLOW;
    for (size_t i = 0; i < n; i++) {
        struct seccomp_outcome o;
        seccomp_bpf_run(progs[i], lens[i], c, &o);
        if (seccomp_ret_wins(o.ret, out->ret))
            out->ret = o.ret;
        out->unknown_read |= o.unknown_read;
        out->varies |= o.varies;
        out->bounded |= o.bounded;
    }
}

static bool acceptable(uint32_t ret, bool must_allow)
{
    if (seccomp_ret_allows(ret))
        return true;
    return !must_allow && (ret & SECCOMP_ACT_MASK) == SECCOMP_ACT_ERRNO;
}

/* ", depending on argument 0 and the instruction pointer, which memprof
 * cannot know in advance: the worst case is taken" */
static void caveat(const struct seccomp_outcome *o, char *buf, size_t len)
{
    buf[0] = 0;
    if (o->bounded) {
        snprintf(buf, len, " (the filter has too many paths to follow them all: memprof "
                 "takes the worst)");
        return;
    }
    if (!o->varies || !o->unknown_read)
        return;
    size_t used = (size_t)snprintf(buf, len, " (depending on ");
    unsigned left = o->unknown_read;
    for (unsigned f = 1; left && used < len; f <<= 1) {
        if (!(left & f))
            continue;
        left &= ~f;
        char name[40];
        used += (size_t)snprintf(buf + used, len - used, "%s%s",
                                 seccomp_field_name(f, name, sizeof name),
                                 left ? " and " : "");
    }
    if (used < len)
        snprintf(buf + used, len - used, ", which memprof cannot know in advance: it "
                 "takes the worst case)");
}

static void say_refusal(pid_t pid, const struct judged *j, const struct seccomp_outcome *o,
                        char *buf, size_t len)
{
    char effect[160], why[200];
    seccomp_ret_effect(o->ret, effect, sizeof effect);
    caveat(o, why, sizeof why);
    if (j->when != RESTORE && j->when != STOP)
        snprintf(buf, len, "process %d's seccomp filter %s for %s%s, a system call the "
                 "sampler makes in the process's own threads (%s) while memprof holds none "
                 "of them; memprof does not put the sampler there", (int)pid, effect,
                 j->name, why, j->what);
    else if (j->when == RESTORE)
        snprintf(buf, len, "process %d's seccomp filter %s for %s%s, the system call %s; "
                 "memprof does not put the sampler there", (int)pid, effect, j->name, why,
                 j->what);
    else
        snprintf(buf, len, "process %d's seccomp filter %s for %s%s, a system call of the "
                 "stop that puts the sampler in, which the thread would make with its filter "
                 "in force if memprof died during that stop; memprof does not put the "
                 "sampler there", (int)pid, effect, j->name, why);
}

const char *sampler_seccomp_judge(pid_t pid, long tgid, const struct seccomp_insn *const *progs,
                                  const size_t *lens, size_t nprogs, enum sampler_probe way,
                                  char *buf, size_t len, struct seccomp_denial *denied)
{
    if (denied)
        memset(denied, 0, sizeof *denied);
    for (size_t i = 0; i < nprogs; i++) {
        char why[200];
        if (seccomp_bpf_check(progs[i], lens[i], why, sizeof why) < 0) {
            snprintf(buf, len, "process %d's seccomp filter %zu (of %zu) is not a program "
                     "memprof can evaluate (%s), so memprof cannot tell what it does to "
                     "the sampler's system calls and does not put the sampler there",
                     (int)pid, i, nprogs, why);
            return buf;
        }
    }
    for (size_t i = 0; i < NCALLS; i++) {
        if (!judged_for(&calls[i], way))
            continue;
        struct seccomp_call c;
        bool must_allow;
        sampler_seccomp_call(i, tgid, &c, &must_allow);
        struct seccomp_outcome o;
        run_all(progs, lens, nprogs, &c, &o);
        if (!acceptable(o.ret, must_allow)) {
            say_refusal(pid, &calls[i], &o, buf, len);
            if (denied && calls[i].when != RESTORE && calls[i].when != STOP) {
                denied->name = calls[i].name;
                seccomp_ret_effect(o.ret, denied->effect, sizeof denied->effect);
                caveat(&o, denied->why, sizeof denied->why);
            }
            return buf;
        }
    }
    return NULL;
}

/* ---- the process's filters --------------------------------------------- */

/* Why memprof cannot read the filters, from the kernel's errno. */
static const char *cannot_read(pid_t pid, pid_t tid, int e, char *buf, size_t len)
{
    snprintf(buf, len, "process %d runs under a seccomp filter memprof cannot read "
             "(PTRACE_SECCOMP_GET_FILTER on thread %d: %s%s), so memprof cannot tell what "
             "it does to the system calls the sampler makes inside the process and does not "
             "put the sampler there", (int)pid, (int)tid, strerror(e),
             e == EACCES ? "; the kernel gives a filter only to a tracer with "
             "CAP_SYS_ADMIN that runs under no filter itself" : "");
    return buf;
}

static const char *no_capability(pid_t pid, pid_t tid, const struct tracer_identity *me,
                                 char *buf, size_t len)
{
    snprintf(buf, len, "process %d runs under a seccomp filter (thread %d) memprof cannot "
             "read: the kernel gives a filter (PTRACE_SECCOMP_GET_FILTER) only to a tracer "
             "with CAP_SYS_ADMIN that runs under no filter itself, and memprof %s; so "
             "memprof cannot tell what the filter does to the system calls the sampler "
             "makes inside the process and does not put the sampler there (give memprof "
             "CAP_SYS_ADMIN, as root, to let it read the filter)", (int)pid, (int)tid,
             me->seccomp ? "runs under seccomp" : "lacks CAP_SYS_ADMIN");
    return buf;
}

static bool count_read(const int *counts, size_t n, int count)
{
    for (size_t i = 0; i < n; i++)
        if (counts[i] == count)
            return true;
    return false;
}

/* Whether the cached verdict still holds for these threads: every filtered
 * thread shows the count of a stack read. */
static bool cache_holds(const struct seccomp_verdict_cache *cache,
                        const struct seccomp_thread *th, size_t nth)
{
    if (!cache->decided)
        return false;
    for (size_t i = 0; i < nth; i++)
        if (th[i].mode == 2 && !count_read(cache->counts, cache->ncounts, th[i].filters))
            return false;
    return true;
}

/* The process's pid in its own namespace (what getpid() gives it): the
 * main thread's NSpid, whose status stays readable while it is a zombie. */
static long own_tgid(struct target *t)
{
    char path[64];
    struct proc_status st;
    snprintf(path, sizeof path, "/proc/%d/status", (int)target_pid(t));
    return preflight_read_status(path, &st) < 0 ? 0 : (long)st.nspid_inner;
}

/* The filter stacks of a process: one read per different count. */
struct stacks {
    struct seccomp_filters v[SECCOMP_STACKS_MAX];
    int counts[SECCOMP_STACKS_MAX];
    size_t n;
};

static void stacks_free(struct stacks *st)
{
    for (size_t i = 0; i < st->n; i++)
        seccomp_filters_free(&st->v[i]);
    st->n = 0;
}

/* Read the filters of thread tid (0: the engine's choice) into the next
 * stack; NULL, or the refusal in buf. */
static const char *read_stack(struct target *t, pid_t tid, struct stacks *st, char *buf,
                              size_t len)
{
    pid_t pid = target_pid(t);
    struct seccomp_filters *f = &st->v[st->n];
    struct mp_error err;
    if (seccomp_filters_read(t, tid, f, &err) < 0) {
        snprintf(buf, len, "memprof could not stop a thread of process %d to read its "
                 "seccomp filters: %s", (int)pid, err.msg);
        return buf;
    }
    st->counts[st->n++] = (int)f->n;
    return f->errno_read ? cannot_read(pid, f->tid, f->errno_read, buf, len) : NULL;
}

/* A filtered thread whose count no stack read has, or NULL. */
static const struct seccomp_thread *unread_thread(const struct seccomp_thread *th, size_t nth,
                                                  const struct stacks *st)
{
    for (size_t i = 0; i < nth; i++)
        if (th[i].mode == 2 && !count_read(st->counts, st->n, th[i].filters))
            return &th[i];
    return NULL;
}

/* Every stack judged with the walk checking pages the way way: NULL, or
 * the first refusal (its call in *d). */
static const char *judge_stacks(pid_t pid, long tgid, const struct stacks *st,
                                enum sampler_probe way, char *buf, size_t len,
                                struct seccomp_denial *d)
{
    const char *r = NULL;
    for (size_t k = 0; !r && k < st->n; k++) {
        const struct seccomp_filters *f = &st->v[k];
        const struct seccomp_insn *progs[SECCOMP_FILTERS_MAX];
        size_t lens[SECCOMP_FILTERS_MAX];
        for (size_t i = 0; i < f->n; i++) {
            progs[i] = f->v[i].insns;
            lens[i] = f->v[i].n;
        }
        r = sampler_seccomp_judge(pid, tgid, progs, lens, f->n, way, buf, len, d);
    }
    return r;
}

/* process_vm_readv first; where a filter denies it, rt_sigprocmask in its
 * place (*way); both denied: a refusal naming both.  *denied: the
 * sampler's own call a refusal is for ("process_vm_readv" when both are:
 * what lets it through lets the sampler in). */
static const char *judge_both_ways(pid_t pid, long tgid, const struct stacks *st,
                                   enum sampler_probe *way, const char **denied, char *buf,
                                   size_t len)
{
    struct seccomp_denial vm, sig;
    *way = SAMPLER_PROBE_VM_READV;
    const char *r = judge_stacks(pid, tgid, st, *way, buf, len, &vm);
    *denied = vm.name ? vm.name : "";
    if (!r || !vm.name || strcmp(vm.name, "process_vm_readv") != 0)
        return r;
    *way = SAMPLER_PROBE_SIGMASK;
    r = judge_stacks(pid, tgid, st, *way, buf, len, &sig);
    if (!r || !sig.name || strcmp(sig.name, "rt_sigprocmask") != 0) {
        *denied = r && sig.name ? sig.name : "";
        return r;
    }
    snprintf(buf, len, "process %d's seccomp filter %s for process_vm_readv%s and %s for "
             "rt_sigprocmask%s, the two system calls by either of which the sampler checks "
             "a page of a stack readable before it reads it (in the process's own threads, "
             "while memprof holds none of them); memprof does not put the sampler there",
             (int)pid, vm.effect, vm.why, sig.effect, sig.why);
    return buf;
}

/* Every different stack read, each judged.  NULL, or the refusal. */
static const char *read_and_judge(struct target *t, const struct seccomp_thread *th,
                                  size_t nth, struct stacks *st, bool *judged,
                                  enum sampler_probe *way, const char **denied, char *buf,
                                  size_t len)
{
    pid_t pid = target_pid(t);
    const char *r = read_stack(t, 0, st, buf, len);
    const struct seccomp_thread *u;
    while (!r && nth > 1 && (u = unread_thread(th, nth, st)) != NULL) {
        if (u->filters < 0) {
            snprintf(buf, len, "process %d runs under seccomp filters, and this kernel does "
                     "not show how many each thread has (Seccomp_filters: Linux 5.9 and "
                     "later), so memprof cannot tell whether its threads' filters differ, and "
                     "does not put the sampler there", (int)pid);
            return buf;
        }
        if (st->n == SECCOMP_STACKS_MAX) {
            snprintf(buf, len, "the threads of process %d run under more than %d different "
                     "stacks of seccomp filters, more than memprof reads; it does not put the "
                     "sampler there", (int)pid, SECCOMP_STACKS_MAX);
            return buf;
        }
        size_t before = st->n;
        r = read_stack(t, u->tid, st, buf, len);
        if (!r && st->counts[before] != u->filters) {
            snprintf(buf, len, "the seccomp filters of thread %d of process %d changed while "
                     "memprof read them (%d, then %d): try again", (int)u->tid, (int)pid,
                     u->filters, st->counts[before]);
            return buf;
        }
    }
    if (r)
        return r;
    *judged = true;
    return judge_both_ways(pid, own_tgid(t), st, way, denied, buf, len);
}

/* Read and judge; the verdict is kept in cache once every stack is read. */
static const char *decide(struct target *t, const struct seccomp_thread *th, size_t nth,
                          pid_t filtered_tid, struct seccomp_verdict_cache *cache,
                          char *buf, size_t len)
{
    struct tracer_identity me;
    preflight_identity(&me);
    if (!me.cap_sys_admin || me.seccomp)
        return no_capability(target_pid(t), filtered_tid, &me, buf, len);
    struct stacks st = {.n = 0};
    bool judged = false;
    const char *denied = "";
    enum sampler_probe way = SAMPLER_PROBE_VM_READV;
    const char *r = read_and_judge(t, th, nth, &st, &judged, &way, &denied, buf, len);
    if (judged) {
        cache->decided = true;
        cache->probe = r ? SAMPLER_PROBE_VM_READV : way;
        snprintf(cache->denied, sizeof cache->denied, "%s", r ? denied : "");
        memcpy(cache->counts, st.counts, sizeof st.counts);
        cache->ncounts = st.n;
        snprintf(cache->refusal, sizeof cache->refusal, "%s", r ? r : "");
    }
    stacks_free(&st);
    return r;
}

/* The threads' seccomp states: NULL with *filtered (a filtered thread, 0
 * none) and *nfilters (its filter count, -1 unknown), or the refusal that
 * needs no filter read (a strict thread, an unreadable task list).  *th is
 * malloc'd (NULL after a refusal). */
static const char *scan_threads(struct target *t, struct seccomp_thread **th, size_t *nth,
                                pid_t *filtered, int *nfilters, char *buf, size_t len)
{
    pid_t pid = target_pid(t);
    struct mp_error err;
    *filtered = 0;
    *nfilters = -1;
    if (seccomp_threads(t, th, nth, &err) < 0) {
        snprintf(buf, len, "memprof cannot tell whether process %d runs under a seccomp "
                 "filter: %s", (int)pid, err.msg);
        return buf;
    }
    for (size_t i = 0; i < *nth; i++) {
        if ((*th)[i].mode == 1) {
            snprintf(buf, len, "thread %d of process %d runs in strict seccomp mode, where "
                     "the kernel kills it for any system call but read, write, exit and "
                     "sigreturn; memprof does not put the sampler there", (int)(*th)[i].tid,
                     (int)pid);
            free(*th);
            *th = NULL;
            return buf;
        }
        if ((*th)[i].mode == 2 && !*filtered) {
            *filtered = (*th)[i].tid;
            *nfilters = (*th)[i].filters;
        }
    }
    return NULL;
}

const char *sampler_seccomp_refusal(struct target *t, struct seccomp_verdict_cache *cache,
                                    char *buf, size_t len)
{
    struct seccomp_thread *th;
    size_t nth;
    pid_t filtered;
    int nfilters;
    const char *r = scan_threads(t, &th, &nth, &filtered, &nfilters, buf, len);
    if (!r && filtered) {
        if (!cache_holds(cache, th, nth))
            r = decide(t, th, nth, filtered, cache, buf, len);
        else if (cache->refusal[0]) {
            snprintf(buf, len, "%s", cache->refusal);
            r = buf;
        }
    }
    free(th);
    return r;
}

enum seccomp_known sampler_seccomp_known(struct target *t,
                                         const struct seccomp_verdict_cache *cache,
                                         int *nfilters, char *buf, size_t len)
{
    struct seccomp_thread *th;
    size_t nth;
    pid_t filtered;
    enum seccomp_known k = SECCOMP_KNOWN_NONE;
    buf[0] = 0;
    if (scan_threads(t, &th, &nth, &filtered, nfilters, buf, len))
        return SECCOMP_KNOWN_REFUSES;
    if (!filtered)
        *nfilters = 0;
    else if (!cache_holds(cache, th, nth))
        k = SECCOMP_KNOWN_UNJUDGED;
    else if (cache->refusal[0]) {
        snprintf(buf, len, "%s", cache->refusal);
        k = SECCOMP_KNOWN_REFUSES;
    } else
        k = SECCOMP_KNOWN_ALLOWS;
    free(th);
    return k;
}
