/* target.c - implements target.h: opening a process (preflight, objects,
 * jemalloc copies, unwinder, remote-call context), the accessors, and
 * closing it without leaving anything behind. */
#include "attach/target_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attach/jemalloc_find.h"
#include "attach/preflight.h"
#include "attach/proc_fate.h"
#include "attach/threads.h"

static char *read_exe(pid_t pid)
{
    char path[64], buf[4096];
    snprintf(path, sizeof path, "/proc/%d/exe", pid);
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
 * Its original bytes come from the executable's file, not from memory: a
 * memprof that died mid-call leaves its trampoline there (dead code,
 * harmless), and taking that for the original would keep it forever. */
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

/* MEMPROF_TRACE_PAUSES=1 (anything but empty or "0"): the one place
 * attach/ prints without being handed a FILE, because a benchmark must see
 * every stop, including those made inside commands that print nothing. */
static bool trace_requested(void)
{
    const char *v = getenv("MEMPROF_TRACE_PAUSES");
    return v && *v && strcmp(v, "0") != 0;
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

static int open_parts(struct target *t, struct mp_error *err)
{
    struct map_list maps = { 0 };
    if (maps_read_pid(t->pid, &maps, err) < 0)
        return -1;
    int rc = mapped_objects_load(t->pid, &maps, &t->objs, err);
    uint64_t entry = 0;
    uint8_t entry_bytes[REMOTE_TRAMP_MAX];
    size_t tramp_len, stop_off;
    arch_trampoline(&tramp_len, &stop_off);
    if (tramp_len > sizeof entry_bytes)
        rc = mp_error_set(err, "internal error: the trampoline outgrew REMOTE_TRAMP_MAX");
    if (rc == 0)
        rc = entry_point(t, &maps, &entry, entry_bytes, tramp_len, err);
    maps_free(&maps);
    if (rc < 0)
        return -1;
    int n = jemalloc_find(t->pid, &t->objs, &t->copies, err);
    if (n < 0)
        return -1;
    t->ncopies = (size_t)n;
    t->unwind = unwind_checker_new(t->pid, &t->objs, t->copies, t->ncopies, err);
    if (!t->unwind)
        return -1;
    if (remote_ctx_init(&t->ctx, t->pid, entry, entry_bytes, t->unwind, err) < 0)
        return -1;
    t->ctx_ready = true;
    t->ctx.trace = trace_requested() ? stderr : NULL;
    t->ctx.start_time = t->start_time;
    return call_limit(&t->ctx.call_limit_s, err);
}

struct target *target_open(pid_t pid, struct mp_error *err)
{
    if (preflight_run(pid, err) < 0) {
        if (proc_exec_in_progress(pid))
            mp_error_set(err, "process %d was executing a new program (exec) while "
                         "memprof was attaching to it: attach to it again", pid);
        return NULL;
    }
    struct target *t = calloc(1, sizeof *t);
    if (!t) {
        mp_error_set(err, "out of memory");
        return NULL;
    }
    t->pid = pid;
    /* Opened first: whatever the process does meanwhile (exit, exec), what
     * follows is checked against the program it ran then. */
    char mem[64];
    snprintf(mem, sizeof mem, "/proc/%d/mem", pid);
    int anchor = open(mem, O_RDONLY | O_CLOEXEC);
    t->start_time = proc_start_time(pid);
    t->exe = read_exe(pid);
    t->ctx.mem_fd = -1;
    read_owner(t);
    int rc = open_parts(t, err);
    /* Any failure, or success on a program that is gone, may be the
     * process exiting or exec'ing under memprof: then say that. */
    enum proc_fate fate = rc < 0 ? proc_fate_settled(pid, anchor, t->start_time, 2.0)
                                 : proc_fate(pid, anchor, t->start_time);
    if (fate == PROC_SAME && rc < 0 && anchor < 0 && proc_start_time(pid) == 0)
        fate = PROC_EXITED;    /* gone before the anchor could be opened */
    if (fate != PROC_SAME)
        rc = proc_fate_error(pid, fate, "while memprof was attaching to it", err);
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
    jemalloc_copies_free(t->copies, t->ncopies);
    mapped_objects_free(&t->objs);
    free(t->exe);
    free(t);
}

pid_t target_pid(const struct target *t)
{
    return t->pid;
}

const char *target_exe(const struct target *t)
{
    return t->exe;
}

int target_thread_count(const struct target *t)
{
    return threads_count(t->pid);
}

size_t target_jemalloc_count(const struct target *t)
{
    return t->ncopies;
}

const struct jemalloc_copy *target_jemalloc(const struct target *t, size_t i)
{
    return i < t->ncopies ? &t->copies[i] : NULL;
}

int target_jemalloc_select(struct target *t, size_t i, struct mp_error *err)
{
    if (i >= t->ncopies)
        return mp_error_set(err, "process %d has %zu jemalloc cop%s: choose 0 to %zu",
                            t->pid, t->ncopies, t->ncopies == 1 ? "y" : "ies",
                            t->ncopies - 1);
    t->selected = i;
    return 0;
}

size_t target_jemalloc_selected(const struct target *t)
{
    return t->selected;
}

int target_mallctl(struct target *t, struct mallctl_call *calls, size_t n,
                   struct mp_error *err)
{
    if (n == 0)
        return 0;
    return mallctl_batch_run(t, calls, n, err);
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

const char *target_calls_refused(const struct target *t)
{
    return t->ctx_ready && t->ctx.no_calls[0] ? t->ctx.no_calls : NULL;
}

bool target_must_exit(const struct target *t)
{
    return t->ctx_ready && t->ctx.must_exit;
}
