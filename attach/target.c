/* target.c - implements target.h: opening a process (preflight, objects,
 * the allocator's probe, unwinder, remote-call context), its stops (with
 * their pause statistics), the accessors, and closing it without leaving
 * anything behind. */
#include "attach/target_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "attach/memory.h"
#include "attach/preflight.h"
#include "attach/session_lock.h"
#include "attach/proc_fate.h"
#include "attach/threads.h"

static char *read_exe(pid_t pid)
{
    char path[96], buf[4096];
    threads_proc_dir(pid, path, sizeof path - 4);
    strcat(path, "/exe");
    ssize_t n = readlink(path, buf, sizeof buf - 1);
    if (n < 0)
        return strdup("?");
    buf[n] = 0;
    return strdup(buf);
}

static void read_owner(struct target *t)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/status", t->pid);
    struct proc_status st;
    if (preflight_read_status(path, &st) == 0) {
        t->euid = st.uid[1];
        t->egid = st.gid[1];
    }
}

/* The trampoline lives at the program's ELF entry point: _start runs once
 * at start-up and never again, so no thread can run into the trampoline.
 * Its original bytes come from the executable's file, not from memory. */
static int entry_point(struct target *t, const struct map_list *maps, uint64_t *entry,
                       uint8_t *orig, size_t len, struct mp_error *err)
{
    const struct mapped_object *exe = mapped_objects_exe(&t->objs);
    if (!exe || !exe->elf->entry)
        return mp_error_set(err, "cannot find the entry point of process %d's "
                            "executable %s", t->pid, t->exe);
    *entry = exe->elf->entry + exe->bias;
    uint64_t off;
    int fd = mapped_object_file_offset(exe, *entry, &off) == 0
                 ? mapped_object_open_file(t->pid, maps, exe->path) : -1;
    ssize_t n = fd < 0 ? -1 : pread(fd, orig, len, (off_t)off);
    if (fd >= 0)
        close(fd);
    if (n != (ssize_t)len)
        return mp_error_set(err, "cannot read the entry point of process %d's "
                            "executable %s from its file", t->pid, exe->path);
    return 0;
}

/* What the entry point holds now.  A memprof that died mid-call leaves its
 * trampoline there, and that memprof's thread may still be inside a call
 * that returns into it and restores itself: those bytes must stay for good.
 * This session then writes nothing there (it puts back what it found).
 * Anything else than the file's bytes or the trampoline is code someone
 * changed: memprof will not write over it. */
static int entry_live(struct target *t, uint64_t entry, uint8_t *orig, size_t len,
                      struct mp_error *err)
{
    size_t tramp_len, stop_off;
    const uint8_t *tramp = arch_trampoline(&tramp_len, &stop_off);
    if (tramp_len != len)
        return mp_error_set(err, "internal error: trampoline length changed");
    uint8_t live[REMOTE_TRAMP_MAX];
    if (remote_read(t->pid, entry, live, len, err) < 0)
        return mp_error_prefix(err, "the entry point of process %d", t->pid);
    if (memcmp(live, orig, len) == 0)
        return 0;
    if (memcmp(live, tramp, len) != 0)
        return mp_error_set(err, "the entry point of process %d (%#llx) holds other "
                            "bytes than its executable's file and memprof's call "
                            "trampoline: something changed its code there (a "
                            "debugger's breakpoint?), and memprof will not write "
                            "over it", t->pid, (unsigned long long)entry);
    memcpy(orig, live, len);
    t->entry_kept = true;
    return 0;
}

/* MEMPROF_TRACE_PAUSES=1 (anything but empty or "0"): the one place
 * attach/ prints without being handed a FILE, because a benchmark must see
 * every stop, including those made inside commands that print nothing. */
static bool trace_requested(void)
{
    const char *v = getenv("MEMPROF_TRACE_PAUSES");
    return v && *v && strcmp(v, "0") != 0;
}

/* MEMPROF_STOP_PRIORITY=0: memprof never raises its own scheduling
 * priority for a stop (the pause benchmark compares both ways). */
static bool stop_priority_wanted(void)
{
    const char *v = getenv("MEMPROF_STOP_PRIORITY");
    return !v || strcmp(v, "0") != 0;
}

/* MEMPROF_CALL_TIMEOUT=SECONDS: how long a call may run before memprof
 * leaves it (remote_session). */
static int call_limit(double *secs, struct mp_error *err)
{
    const char *v = getenv("MEMPROF_CALL_TIMEOUT");
    if (!v || !*v)
        return 0;
    char *end;
    double d = strtod(v, &end);
    if (*end || !(d > 0 && d <= 86400))
        return mp_error_set(err, "MEMPROF_CALL_TIMEOUT=%s: give a number of seconds "
                            "from 0 to 86400 (default %.0f)", v, REMOTE_CALL_LIMIT_S);
    *secs = d;
    return 0;
}

#define LOADER_WAIT_S 2.0

/* The allocator was not found in a process whose dynamic loader is still
 * at work (just started or exec'd: the library may come next).  Waits up to
 * LOADER_WAIT_S for it to finish: true when it did (look again); false
 * with err as it was when the loader was idle, or saying it is still
 * loading. */
/* A digest of the files the process maps (their paths, in order): a
 * loader at work changes it as it maps libraries.  0 when unreadable. */
static uint64_t mapped_files_digest(pid_t pid)
{
    char path[64], line[4096];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return 0;
    uint64_t h = 1469598103934665603ULL;
    while (fgets(line, sizeof line, f)) {
        const char *file = strchr(line, '/');
        for (const char *c = file; c && *c; c++)
            h = (h ^ (unsigned char)*c) * 1099511628211ULL;
    }
    fclose(f);
    return h;
}

/* The loader can be at work before its r_debug says so (the instant after
 * an exec): the mapped files changing within a short watch tells too;
 * then wait until they settle.  Whether they changed. */
static bool files_settle(pid_t pid)
{
    uint64_t before = mapped_files_digest(pid);
    struct timespec step = { 0, 10 * 1000 * 1000 };
    for (int i = 0; before && i < 20; i++) {
        nanosleep(&step, NULL);
        uint64_t now = mapped_files_digest(pid);
        if (now && now != before) {
            /* then until it settles, within the loader's bound */
            for (int k = 0; k < (int)(LOADER_WAIT_S * 50) && now != before; k++) {
                before = now;
                struct timespec settle = { 0, 20 * 1000 * 1000 };
                nanosleep(&settle, NULL);
                now = mapped_files_digest(pid);
            }
            return true;
        }
    }
    return false;
}

/* Wait for the loader: true when it finished or its files settled after
 * changing (worth asking again), or when the probe said the process may be
 * loading (probe_rc TARGET_PROBE_LOADING: it asks again, knowing it
 * waited); false otherwise, with err set when the loader has not finished
 * within its bound. */
static bool loader_finished(pid_t pid, int probe_rc, struct mp_error *err)
{
    if (!proc_loader_busy(pid))
        return files_settle(pid) || probe_rc == TARGET_PROBE_LOADING;
    struct timespec step = { 0, 10 * 1000 * 1000 };
    for (double waited = 0; waited < LOADER_WAIT_S; waited += 0.01) {
        nanosleep(&step, NULL);
        if (!proc_loader_busy(pid))
            return true;
    }
    mp_error_set(err, "process %d is still loading its libraries (its dynamic loader "
                 "has not finished after %.0f s: it was just started or executed a new "
                 "program, or the loader waits on a file): attach to it again once "
                 "it runs", pid, LOADER_WAIT_S);
    return false;
}

/* Whether the address space read as old is not, or no longer, the
 * program's: it had no executable file mapping at all (read between an
 * exec's switch to the new address space and the mapping of the new
 * program, when /proc/PID/syscall shows the exec'ing thread only as
 * "running"), or not one of its executable file mappings is still in
 * place.  Every object unreadable then means an exec swapped the address
 * space while memprof read it (an exit leaves the maps empty, and
 * proc_fate says so). */
static bool maps_replaced(pid_t pid, const struct map_list *old)
{
    if (!maps_have_program(old))
        return true;
    struct map_list now = { 0 };
    struct mp_error ignored;
    if (maps_read_pid(pid, &now, &ignored) < 0)
        return false;
    bool kept = false;
    for (size_t i = 0; i < old->n && !kept; i++) {
        const struct map_entry *o = &old->v[i];
        if (!o->x || !map_entry_is_file(o))
            continue;
        for (size_t j = 0; j < now.n && !kept; j++)
            kept = now.v[j].start == o->start && now.v[j].end == o->end &&
                   now.v[j].inode == o->inode;
    }
    maps_free(&now);
    return !kept;
}

static int open_parts(struct target *t, const struct target_options *opts,
                      const struct target_probe *probe, struct mp_error *err)
{
    struct map_list maps = { 0 };
    if (maps_read_pid(t->pid, &maps, err) < 0)
        return -1;
    /* Read while an exec replaces the address space, the maps may be the
     * new program's before its files are mapped: a failure to come is the
     * exec's. */
    t->exec_seen = t->exec_seen || proc_exec_in_progress(t->pid);
    int rc = mapped_objects_load(t->pid, &maps, &t->objs, err);
    if (rc < 0 && !t->exec_seen)
        t->exec_seen = maps_replaced(t->pid, &maps);
    uint64_t entry = 0;
    uint8_t entry_bytes[REMOTE_TRAMP_MAX];
    size_t tramp_len, stop_off;
    arch_trampoline(&tramp_len, &stop_off);
    if (tramp_len > sizeof entry_bytes)
        rc = mp_error_set(err, "internal error: the trampoline outgrew REMOTE_TRAMP_MAX");
    if (rc == 0)
        rc = entry_point(t, &maps, &entry, entry_bytes, tramp_len, err);
    if (rc == 0)
        rc = entry_live(t, entry, entry_bytes, tramp_len, err);
    maps_free(&maps);
    if (rc < 0)
        return -1;
    struct code_ranges unsafe = { 0 };
    int found = probe->find(t, &t->objs, opts, &unsafe, probe->arg, err);
    if (found < 0) {
        code_ranges_free(&unsafe);
        if (t->loader_waited || !loader_finished(t->pid, found, err))
            return -1;
        t->loader_waited = true;
        mapped_objects_free(&t->objs);
        t->entry_kept = false;
        return open_parts(t, opts, probe, err);
    }
    t->unwind = unwind_checker_new(t->pid, &t->objs, &unsafe, err);
    code_ranges_free(&unsafe);
    if (!t->unwind)
        return -1;
    if (remote_ctx_init(&t->ctx, t->pid, entry, entry_bytes, t->unwind, err) < 0)
        return -1;
    t->ctx_ready = true;
    t->ctx.trace = trace_requested() ? stderr : NULL;
    t->ctx.start_time = t->start_time;
    stop_priority_init(&t->ctx.prio, stop_priority_wanted());
    return call_limit(&t->ctx.call_limit_s, err);
}

/* The session lock comes first, before any thread is stopped, and its
 * refusal before any other: a second memprof learns which memprof holds
 * the process, not that a thread of it "is traced" or "stopped".  When the
 * lock cannot be taken at all, preflight usually says why (gone, not ours). */
static int lock_target(pid_t pid, int *lock_fd, struct mp_error *err)
{
    char dir[64];
    struct mp_error lock_err;
    threads_proc_dir(pid, dir, sizeof dir);
    *lock_fd = session_lock_take(pid, dir, &lock_err);
    if (*lock_fd == SESSION_LOCK_HELD) {
        *err = lock_err;
        return -1;
    }
    if (preflight_run(pid, err) < 0)
        return -1;
    if (*lock_fd < 0) {
        *err = lock_err;
        return -1;
    }
    return 0;
}

/* A failure while a thread of the process was inside execve is the exec's. */
static void exec_under_way(pid_t pid, struct mp_error *err)
{
    mp_error_set(err, "process %d was executing a new program (exec) while memprof was "
                 "attaching to it: attach to it again", pid);
}

/* A refusal before the lock was taken may be the process exec'ing or
 * exiting under the checks (a thread's /proc directory gone between
 * choosing it and reading it): then say that instead. */
static void lock_refused(pid_t pid, int anchor, unsigned long long start_time,
                         struct mp_error *err)
{
    enum proc_fate fate = proc_fate(pid, anchor, start_time);
    if (fate != PROC_SAME)
        proc_fate_error(pid, fate, "while memprof was attaching to it", err);
    else if (proc_exec_in_progress(pid))
        exec_under_way(pid, err);
}

struct target *target_open_with(pid_t pid, const struct target_options *opts,
                                const struct target_probe *probe, struct mp_error *err)
{
    int lock_fd;
    /* Opened first: whatever the process does meanwhile (exit, exec), what
     * follows is checked against the program it ran then. */
    unsigned long long start_time = proc_start_time(pid);
    int anchor = proc_fate_anchor(pid);
    if (lock_target(pid, &lock_fd, err) < 0) {
        session_lock_release(lock_fd);
        lock_refused(pid, anchor, start_time, err);
        if (anchor >= 0)
            close(anchor);
        return NULL;
    }
    struct target *t = calloc(1, sizeof *t);
    if (!t) {
        session_lock_release(lock_fd);
        if (anchor >= 0)
            close(anchor);
        mp_error_set(err, "out of memory");
        return NULL;
    }
    t->pid = pid;
    t->lock_fd = lock_fd;
    t->start_time = start_time;
    t->exe = read_exe(pid);
    t->ctx.mem_fd = -1;
    read_owner(t);
    int rc = open_parts(t, opts, probe, err);
    /* Any failure, or success on a program that is gone, may be the
     * process exiting or exec'ing under memprof: then say that. */
    enum proc_fate fate = rc < 0 ? proc_fate_settled(pid, anchor, t->start_time, 2.0)
                                 : proc_fate(pid, anchor, t->start_time);
    if (fate == PROC_SAME && rc < 0 && anchor < 0 && proc_start_time(pid) == 0)
        fate = PROC_EXITED;    /* gone before the anchor could be opened */
    if (fate != PROC_SAME)
        rc = proc_fate_error(pid, fate, "while memprof was attaching to it", err);
    else if (rc < 0 && t->exec_seen)
        exec_under_way(pid, err);
    if (anchor >= 0)
        close(anchor);
    if (rc < 0) {
        target_close(t);
        return NULL;
    }
    return t;
}

void target_close(struct target *t)
{
    if (!t)
        return;
    dump_dir_remove(t);
    if (t->ctx_ready)
        remote_ctx_fini(&t->ctx);
    unwind_checker_free(t->unwind);
    target_set_allocator(t, NULL, NULL);
    mapped_objects_free(&t->objs);
    free(t->exe);
    /* Last: only now may another memprof write at the entry point. */
    session_lock_release(t->lock_fd);
    free(t);
}

pid_t target_pid(const struct target *t)
{
    return t->pid;
}

bool target_loader_waited(const struct target *t)
{
    return t->loader_waited;
}

const char *target_exe(const struct target *t)
{
    return t->exe;
}

void target_proc_dir(const struct target *t, char *buf, size_t len)
{
    threads_proc_dir(t->pid, buf, len);
}

int target_thread_count(const struct target *t)
{
    return threads_count(t->pid);
}

const struct mapped_objects *target_objects(const struct target *t)
{
    return &t->objs;
}

enum proc_fate target_fate(const struct target *t)
{
    return proc_fate(t->pid, t->ctx_ready ? t->ctx.mem_fd : -1, t->start_time);
}

void target_set_allocator(struct target *t, void *state, void (*free_fn)(void *))
{
    if (t->allocator && t->allocator_free)
        t->allocator_free(t->allocator);
    t->allocator = state;
    t->allocator_free = free_fn;
}

void *target_allocator(const struct target *t)
{
    return t->allocator;
}

/* The thread just used ran with its seccomp filter suspended (seize() in
 * remote_call.c asks for that whenever memprof may): the operator is told
 * once per session, since the calls' own system calls were not filtered. */
static void note_seccomp(struct target *t)
{
    if (t->seccomp_suspended || !t->pauses.last_tid || t->ctx.cannot_suspend_seccomp)
        return;
    char path[96];
    struct proc_status st;
    snprintf(path, sizeof path, "/proc/%d/task/%d/status", t->pid, (int)t->pauses.last_tid);
    if (preflight_read_status(path, &st) < 0 || st.seccomp != 2)
        return;
    t->seccomp_suspended = true;
    if (t->notes)
        fprintf(t->notes, "note: process %d runs under a seccomp filter; memprof "
                "suspended it (PTRACE_O_SUSPEND_SECCOMP) for thread %d while that "
                "thread ran memprof's calls, so their system calls (a dump's "
                "openat and write) were not filtered; the filter applies again "
                "once memprof lets the thread go\n", t->pid, (int)t->pauses.last_tid);
}

/* memprof could not raise its own priority for the stops (no
 * CAP_SYS_NICE, ...): said once per session, since on a busy machine its
 * stops may then last milliseconds.  Not when the operator turned it off. */
static void note_stop_priority(struct target *t)
{
    const struct stop_priority *p = &t->ctx.prio;
    if (t->prio_noted || p->state != STOP_PRIORITY_NOT_RAISED || p->disabled)
        return;
    t->prio_noted = true;
    if (t->notes)
        fprintf(t->notes, "note: memprof does not raise its scheduling priority during "
                "stops: %s; on a machine whose CPUs are all busy a stop may then hold "
                "the thread for milliseconds\n", p->why);
}

const char *target_stop_priority(const struct target *t)
{
    const struct stop_priority *p = &t->ctx.prio;
    switch (p->state) {
    case STOP_PRIORITY_RAISED:
        return NULL;
    case STOP_PRIORITY_NOT_RAISED:
        return p->why;
    default:
        return p->disabled ? "MEMPROF_STOP_PRIORITY=0 in memprof's environment" : NULL;
    }
}

const char *target_stop_cpus_asleep(const struct target *t)
{
    const struct stop_priority *p = &t->ctx.prio;
    return p->state == STOP_PRIORITY_RAISED && p->awake_why[0] ? p->awake_why : NULL;
}

/* ---- stops ---------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median and p90 of the history ring (sorted copy: at most 1024 values,
 * computed after the thread was let go). */
static void update_percentiles(struct target *t)
{
    struct target_pause_stats *p = &t->pauses;
    size_t n = p->calls < PAUSE_HISTORY ? p->calls : PAUSE_HISTORY;
    double sorted[PAUSE_HISTORY];
    memcpy(sorted, t->pause_history, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, cmp_double);
    p->median_us = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    size_t k = (n * 9 + 9) / 10;    /* nearest rank: ceil(0.9 n) */
    p->p90_us = sorted[k - 1];
}

static void record_pause(struct target *t, const struct remote_report *rep)
{
    struct target_pause_stats *p = &t->pauses;
    t->pause_history[p->calls % PAUSE_HISTORY] = rep->pause_us;
    p->calls++;
    update_percentiles(t);
    p->last_us = rep->pause_us;
    p->total_us += rep->pause_us;
    if (rep->pause_us > p->max_us)
        p->max_us = rep->pause_us;
    p->last_tid = rep->tid;
    p->unsafe_retries += rep->unsafe_retries;
}

/* The first stop of a session runs the sweep before its body. */
#define SWEEP_MAX 64
struct swept_body {
    struct target *t;
    remote_body_fn body;
    void *arg;
    int fds[SWEEP_MAX];
    size_t nfds;
};

static int swept_body(struct remote_stop *s, void *arg, struct mp_error *err)
{
    struct swept_body *w = arg;
    memfd_sweep_in_stop(w->t, s, w->fds, w->nfds);
    return w->body(s, w->arg, err);
}

int target_stop_run(struct target *t, remote_body_fn body, void *arg,
                    struct mp_error *err)
{
    session_lock_drain(t->lock_fd);
    struct swept_body w = { .t = t, .body = body, .arg = arg };
    if (!t->memfd_swept)
        w.nfds = memfd_sweep_list(t, w.fds, SWEEP_MAX);
    struct remote_report rep;
    int rc = w.nfds ? remote_session(&t->ctx, swept_body, &w, &rep, err)
                    : remote_session(&t->ctx, body, arg, &rep, err);
    if (rep.tid)
        record_pause(t, &rep);
    if (rc == 0)
        t->memfd_swept = true;
    note_seccomp(t);
    note_stop_priority(t);
    return rc;
}

int target_stop_run_thread(struct target *t, pid_t tid, remote_body_fn body, void *arg,
                           struct mp_error *err)
{
    t->ctx.only_tid = tid;
    int rc = target_stop_run(t, body, arg, err);
    t->ctx.only_tid = 0;
    return rc;
}

int target_read_string(struct target *t, uint64_t addr, char *buf, size_t len,
                       struct mp_error *err)
{
    if (len == 0)
        return mp_error_set(err, "no room for the string");
    /* Read page by page: a string near the end of a mapping must not make
     * the whole read fail. */
    size_t got = 0;
    while (got + 1 < len) {
        size_t page_left = 4096 - ((addr + got) & 4095);
        size_t want = len - 1 - got < page_left ? len - 1 - got : page_left;
        if (remote_read(t->pid, addr + got, buf + got, want, err) < 0)
            return -1;
        void *nul = memchr(buf + got, 0, want);
        if (nul)
            return 0;
        got += want;
    }
    buf[len - 1] = 0;
    return 0;
}

const struct target_pause_stats *target_pauses(const struct target *t)
{
    return &t->pauses;
}

void target_set_notes(struct target *t, FILE *notes)
{
    t->notes = notes;
}

bool target_entry_kept(const struct target *t)
{
    return t->entry_kept;
}

bool target_seccomp_suspended(const struct target *t)
{
    return t->seccomp_suspended;
}

bool target_secure_exec(const struct target *t)
{
    return preflight_secure_exec(t->pid);
}

const char *target_calls_refused(const struct target *t)
{
    return t->ctx_ready && t->ctx.no_calls[0] ? t->ctx.no_calls : NULL;
}

bool target_must_exit(const struct target *t)
{
    return t->ctx_ready && t->ctx.must_exit;
}
