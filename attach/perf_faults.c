/* perf_faults.c - owns the kernel's sampling of a process's page faults
 * (perf_faults.h): one event per thread and CPU, opened from
 * /proc/PID/task, one ring buffer per CPU read with its head and tail,
 * all closed whole. */
#include "attach/perf_faults.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "attach/arch/arch.h"
#include "attach/preflight.h"

#define PAGE_BYTES      4096u
#define RING_PAGES_MAX  256u         /* data pages per CPU, at most (1 MiB) */
#define RING_PAGES_MIN  4u           /* room for a sample with its stack */
#define RING_BUDGET     (64u << 20)  /* ring memory for all CPUs, at most */
#define CAP_SYS_ADMIN_BIT 21
#define CAP_PERFMON_BIT   38

struct ring {
    int fd;
    void *base;                      /* the metadata page, then the data */
    size_t data_bytes;               /* a power of two */
};

struct perf_faults {
    struct ring *rings;              /* one per CPU (base NULL: none yet) */
    size_t ncpus;
    int *fds;                        /* every event */
    size_t nfds;
    struct pollfd *polls;            /* the rings' */
    size_t npolls;
    uint64_t period;                 /* the fixed period, 0: by frequency */
    struct perf_faults_counts c;
    uint8_t *scratch;                /* one record, put together across the wrap */
};

static void fill_attr(struct perf_event_attr *a, const struct perf_faults_options *o,
                      bool exclude_kernel, size_t ring_data)
{
    memset(a, 0, sizeof *a);
    a->size = sizeof *a;
    a->type = PERF_TYPE_SOFTWARE;
    a->config = PERF_COUNT_SW_PAGE_FAULTS;
    a->sample_type = PERF_RECORD_FAULT_SAMPLE_TYPE | (o->period ? 0 : PERF_RECORD_FAULT_PERIOD);
    a->sample_regs_user = arch_perf_user_regs();
    a->sample_stack_user = PERF_FAULTS_STACK_BYTES;
    if (o->period) {
        a->sample_period = o->period;
    } else {
        a->freq = 1;
        a->sample_freq = o->freq;
    }
    a->inherit = 1;                  /* threads made later are followed too */
    a->exclude_kernel = exclude_kernel;
    a->exclude_hv = 1;
    a->watermark = 1;
    a->wakeup_watermark = (uint32_t)(ring_data / 2);
}

/* ---- saying why the kernel refused ------------------------------------- */

static long read_long_file(const char *path, long fallback)
{
    FILE *f = fopen(path, "re");
    long v = fallback;
    if (f) {
        if (fscanf(f, "%ld", &v) != 1)
            v = fallback;
        fclose(f);
    }
    return v;
}

static int refused(pid_t pid, pid_t tid, int e, struct mp_error *err)
{
    long paranoid = read_long_file("/proc/sys/kernel/perf_event_paranoid", -100);
    struct proc_status me;
    bool known = preflight_read_status("/proc/self/status", &me) == 0;
    uint64_t either = (UINT64_C(1) << CAP_PERFMON_BIT) | (UINT64_C(1) << CAP_SYS_ADMIN_BIT);
    bool perfmon = known && me.have_cap_eff && (me.cap_eff & either);
    const char *what = e == EACCES ? "EACCES" : "EPERM";
    char level[64] = "unknown (its file could not be read)";
    if (paranoid != -100)
        snprintf(level, sizeof level, "%ld", paranoid);
    if (known && me.seccomp == 2)
        mp_error_set(err, "the kernel refused perf_event_open for thread %d of process %d "
                     "(%s): memprof itself runs under a seccomp filter (Seccomp: 2 in "
                     "/proc/self/status), which may refuse it (kernel.perf_event_paranoid "
                     "is %s): allow perf_event_open in that filter (a container's seccomp "
                     "profile, a unit's SystemCallFilter=) or run memprof without it",
                     (int)tid, (int)pid, what, level);
    else if (paranoid > 2 && !perfmon)
        mp_error_set(err, "the kernel refused perf_event_open for thread %d of process %d "
                     "(%s): kernel.perf_event_paranoid is %ld, and above 2 Debian's kernels "
                     "(and others with its patch) allow perf events only to a caller with "
                     "CAP_PERFMON (or CAP_SYS_ADMIN): run memprof as root or with "
                     "CAP_PERFMON, or lower it with 'sysctl kernel.perf_event_paranoid=2'",
                     (int)tid, (int)pid, what, paranoid);
    else
        mp_error_set(err, "the kernel refused perf_event_open for thread %d of process %d "
                     "(%s): at kernel.perf_event_paranoid %s memprof needs to be allowed to "
                     "read the process as ptrace does (the same user, not made "
                     "undumpable) or CAP_PERFMON: run memprof as the process's user, as "
                     "root, or with CAP_PERFMON", (int)tid, (int)pid, what, level);
    return mp_error_mark(err, MP_ERROR_DENIED);
}

static int open_failed(pid_t pid, pid_t tid, int e, struct mp_error *err)
{
    switch (e) {
    case EACCES:
    case EPERM:
        return refused(pid, tid, e, err);
    case ENOENT:
    case EOPNOTSUPP:
    case ENODEV:
        return mp_error_set(err, "this kernel has no software page-fault event for "
                            "perf_event_open (%s): it was built without "
                            "CONFIG_PERF_EVENTS, or this CPU's perf support is missing; "
                            "'faults' cannot run here", strerror(e));
    case ENOSYS:
        return mp_error_set(err, "perf_event_open does not exist here (ENOSYS): the "
                            "kernel was built without CONFIG_PERF_EVENTS, or a seccomp "
                            "filter around memprof hides it");
    case EMFILE:
    case ENFILE:
        return mp_error_set(err, "out of file descriptors opening perf events for "
                            "process %d: one is needed per thread and CPU; raise "
                            "'ulimit -n' (its hard limit: memprof raises the soft one)",
                            (int)pid);
    default:
        return mp_error_set(err, "perf_event_open for thread %d of process %d: %s",
                            (int)tid, (int)pid, strerror(e));
    }
}

/* ---- threads, CPUs and their rings ------------------------------------ */

/* The kernel maps no ring for an inherited event on every CPU (cpu -1):
 * so, as perf does, one event per thread and CPU (threads made later
 * inherit it), and one ring per CPU that every event on that CPU writes
 * into (PERF_EVENT_IOC_SET_OUTPUT). */

static int map_ring(struct perf_faults *pf, struct ring *r, size_t pages, struct mp_error *err)
{
    for (;; pages /= 2) {
        r->base = mmap(NULL, (pages + 1) * PAGE_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED,
                       r->fd, 0);
        if (r->base != MAP_FAILED)
            break;
        r->base = NULL;
        if (errno != EPERM || pages <= RING_PAGES_MIN)
            return mp_error_set(err, "a perf ring buffer could not be mapped (%s)%s",
                                strerror(errno), errno != EPERM ? "" :
                                ": the locked memory allowed for perf buffers is used up "
                                "(kernel.perf_event_mlock_kb per user, then ulimit -l): "
                                "raise either, or run memprof as root (CAP_IPC_LOCK)");
    }
    r->data_bytes = pages * PAGE_BYTES;
    pf->c.ring_bytes += (pages + 1) * PAGE_BYTES;
    return 0;
}

static size_t ring_pages(size_t cpus)
{
    size_t pages = RING_PAGES_MAX;
    while (pages > RING_PAGES_MIN && cpus * (pages + 1) * PAGE_BYTES > RING_BUDGET)
        pages /= 2;
    return pages;
}

/* Thread tid's event on cpu, its output joined to the CPU's ring (made
 * with the first); 1 when the thread or the CPU is gone. */
static int open_event_on(struct perf_faults *pf, pid_t pid, pid_t tid, int cpu,
                         const struct perf_faults_options *o, struct mp_error *err)
{
    struct ring *r = &pf->rings[cpu];
    size_t pages = ring_pages(pf->ncpus);
    struct perf_event_attr a;
    fill_attr(&a, o, pf->c.kernel_excluded, pages * PAGE_BYTES);
    long fd = syscall(SYS_perf_event_open, &a, tid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0 && (errno == EACCES || errno == EPERM) && !pf->c.kernel_excluded &&
        pf->nfds == 0) {
        pf->c.kernel_excluded = true;    /* the process's own faults only, then */
        fill_attr(&a, o, true, pages * PAGE_BYTES);
        fd = syscall(SYS_perf_event_open, &a, tid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
    }
    if (fd < 0)
        return errno == ESRCH || errno == ENODEV ? 1 : open_failed(pid, tid, errno, err);
    pf->fds[pf->nfds++] = (int)fd;
    if (!r->base) {
        r->fd = (int)fd;
        if (map_ring(pf, r, pages, err) < 0)
            return -1;
        pf->polls[pf->npolls++] = (struct pollfd){.fd = r->fd, .events = POLLIN};
    } else if (ioctl((int)fd, PERF_EVENT_IOC_SET_OUTPUT, r->fd) < 0) {
        return mp_error_set(err, "perf_event_open: joining thread %d's event to CPU %d's "
                            "ring: %s", (int)tid, cpu, strerror(errno));
    }
    return 0;
}

static int open_thread(struct perf_faults *pf, pid_t pid, pid_t tid,
                       const struct perf_faults_options *o, struct mp_error *err)
{
    if (pf->nfds + pf->ncpus > PERF_FAULTS_MAX_EVENTS)
        return mp_error_set(err, "process %d has too many threads for 'faults' on %zu "
                            "CPUs: it opens at most %u events (one per thread and CPU)",
                            (int)pid, pf->ncpus, PERF_FAULTS_MAX_EVENTS);
    bool any = false;
    for (size_t cpu = 0; cpu < pf->ncpus; cpu++) {
        int rc = open_event_on(pf, pid, tid, (int)cpu, o, err);
        if (rc < 0)
            return -1;
        any |= rc == 0;
    }
    return any ? 0 : 1;
}

static bool have_thread(const pid_t *tids, size_t n, pid_t tid)
{
    for (size_t i = 0; i < n; i++)
        if (tids[i] == tid)
            return true;
    return false;
}

/* The threads listed in /proc/PID/task that have no event yet: how many
 * were opened, or -1. */
static int open_new_threads(struct perf_faults *pf, pid_t pid, pid_t *tids, size_t *ntids,
                            const struct perf_faults_options *o, struct mp_error *err)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    if (!d)
        return mp_error_set(err, "process %d: %s: %s", (int)pid, path, strerror(errno));
    struct dirent *de;
    int opened = 0, rc = 0;
    while (rc >= 0 && (de = readdir(d))) {
        if (de->d_name[0] < '1' || de->d_name[0] > '9')
            continue;
        pid_t tid = (pid_t)atoi(de->d_name);
        if (have_thread(tids, *ntids, tid))
            continue;
        if (*ntids == PERF_FAULTS_MAX_THREADS) {
            rc = mp_error_set(err, "process %d has more than %u threads: 'faults' "
                              "follows at most that many", (int)pid, PERF_FAULTS_MAX_THREADS);
            break;
        }
        rc = open_thread(pf, pid, tid, o, err);
        if (rc == 0) {              /* (1: it exited meanwhile, nothing to follow) */
            tids[(*ntids)++] = tid;
            opened++;
        }
    }
    closedir(d);
    return rc < 0 ? -1 : opened;
}

/* Descriptors: one per thread and CPU, so the soft limit goes up to the
 * hard one (memprof's own). */
static void raise_nofile(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

struct perf_faults *perf_faults_open(pid_t pid, const struct perf_faults_options *o,
                                     struct mp_error *err)
{
    struct perf_faults *pf = calloc(1, sizeof *pf);
    pid_t *tids = calloc(PERF_FAULTS_MAX_THREADS, sizeof *tids);
    size_t ntids = 0;
    long cpus = sysconf(_SC_NPROCESSORS_CONF);
    if (pf) {
        pf->ncpus = cpus > 0 ? (size_t)cpus : 1;
        pf->rings = calloc(pf->ncpus, sizeof *pf->rings);
        pf->polls = calloc(pf->ncpus, sizeof *pf->polls);
        pf->fds = calloc(PERF_FAULTS_MAX_EVENTS, sizeof *pf->fds);
        pf->scratch = malloc(1u << 16);
    }
    if (!pf || !tids || !pf->rings || !pf->polls || !pf->fds || !pf->scratch) {
        mp_error_set(err, "out of memory");
        goto fail;
    }
    pf->period = o->period;
    raise_nofile();
    /* Threads made between the listing and their creator's event opening
     * are not inherited: list again until a pass finds none new. */
    for (int pass = 0; pass < 8; pass++) {
        int rc = open_new_threads(pf, pid, tids, &ntids, o, err);
        if (rc < 0)
            goto fail;
        if (rc == 0)
            break;
    }
    if (ntids == 0) {
        mp_error_set(err, "process %d has no thread left to sample", (int)pid);
        mp_error_mark(err, MP_ERROR_NO_PROCESS);
        goto fail;
    }
    pf->c.threads = (unsigned)ntids;
    free(tids);
    return pf;
fail:
    free(tids);
    perf_faults_close(pf);
    return NULL;
}

/* ---- reading ------------------------------------------------------------ */

static void ring_copy(const struct ring *r, uint64_t at, void *out, size_t n)
{
    const uint8_t *data = (const uint8_t *)r->base + PAGE_BYTES;
    size_t off = (size_t)(at & (r->data_bytes - 1)), first = r->data_bytes - off;
    if (first >= n) {
        memcpy(out, data + off, n);
    } else {
        memcpy(out, data + off, first);
        memcpy((uint8_t *)out + first, data, n - first);
    }
}

static void count(struct perf_faults *pf, const struct perf_record *rec, perf_faults_fn *fn,
                  void *ctx)
{
    switch (rec->kind) {
    case PERF_RECORD_KIND_SAMPLE:
        pf->c.samples++;
        fn(ctx, &rec->sample);
        break;
    case PERF_RECORD_KIND_LOST: pf->c.lost += rec->lost; break;
    case PERF_RECORD_KIND_THROTTLE: pf->c.throttled++; break;
    case PERF_RECORD_KIND_BAD: pf->c.malformed++; break;
    case PERF_RECORD_KIND_OTHER: break;
    }
}

static void drain(struct perf_faults *pf, struct ring *r, perf_faults_fn *fn, void *ctx)
{
    struct perf_event_mmap_page *meta = r->base;
    uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
    uint64_t tail = meta->data_tail;
    if (head - tail > r->data_bytes) {       /* cannot be: start again at head */
        pf->c.malformed++;
        tail = head;
    }
    while (head - tail >= sizeof(struct perf_event_header)) {
        struct perf_event_header h;
        ring_copy(r, tail, &h, sizeof h);
        if (h.size < sizeof h || h.size > head - tail) {
            pf->c.malformed++;
            tail = head;
            break;
        }
        ring_copy(r, tail, pf->scratch, h.size);
        struct perf_record rec;
        perf_record_parse(pf->scratch, h.size, pf->period == 0, &rec);
        if (rec.kind == PERF_RECORD_KIND_SAMPLE && pf->period)
            rec.sample.period = pf->period;
        count(pf, &rec, fn, ctx);
        tail += h.size;
    }
    __atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
}

void perf_faults_read(struct perf_faults *pf, int timeout_ms, perf_faults_fn *fn, void *ctx)
{
    if (timeout_ms > 0)
        poll(pf->polls, pf->npolls, timeout_ms);
    for (size_t i = 0; i < pf->ncpus; i++)
        if (pf->rings[i].base)
            drain(pf, &pf->rings[i], fn, ctx);
}

const struct perf_faults_counts *perf_faults_counts(const struct perf_faults *pf)
{
    return &pf->c;
}

void perf_faults_close(struct perf_faults *pf)
{
    if (!pf)
        return;
    for (size_t i = 0; pf->rings && i < pf->ncpus; i++)
        if (pf->rings[i].base)
            munmap(pf->rings[i].base, pf->rings[i].data_bytes + PAGE_BYTES);
    for (size_t i = 0; pf->fds && i < pf->nfds; i++)
        close(pf->fds[i]);
    free(pf->fds);
    free(pf->rings);
    free(pf->polls);
    free(pf->scratch);
    free(pf);
}
