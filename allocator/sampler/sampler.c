/* sampler.c - owns memprof's side of the heap sampler (sampler.h): where
 * it may go, putting it in (its gate once, a body each time) and taking it
 * out (the body unmapped once the gate counts no thread inside), reading
 * its samples as a heap_v2 profile, and finding what a dead memprof left
 * or a forked child inherited.  The process's
 * memory is read and written through /proc/PID/mem, which reaches the
 * read-only pages of a call table (RELRO) without changing their
 * protection: the process never sees its tables writable. */
#include "allocator/sampler/sampler.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "allocator/sampler/abi.h"
#include "allocator/sampler/image.h"
#include "allocator/sampler/seccomp_check.h"
#include "attach/link_map.h"
#include "attach/memory.h"
#include "attach/preflight.h"
#include "lib/elf/cfi_rows.h"
#include "lib/elf/elf_got.h"
#include "lib/proc/maps.h"
#include "lib/profile/synthetic_frames.h"

#define REGION_NAME "memprof-sampler"        /* the gate's memfd: kept */
#define BODY_NAME   "memprof-sampler-body"   /* the body's: gone at 'prof off' */
#define PAGE        SAMPLER_GATE_SIZE
#define DATA_OFF(field) (SAMPLER_CODE_SIZE + offsetof(struct sampler_data, field))

_Static_assert(sizeof(struct sampler_row) == 16, "sampler_row is 16 bytes");
_Static_assert(sizeof(struct cfi_row) == sizeof(struct sampler_row), "cfi_row is a sampler_row");
_Static_assert(offsetof(struct cfi_row, cfa_reg) == offsetof(struct sampler_row, cfa_reg),
               "cfi_row is a sampler_row");

/* The names the stand-ins replace, in enum sampler_fn's order. */
static const char *const fn_names[SF_COUNT] = {
    "malloc", "free", "calloc", "realloc", "reallocarray",
    "posix_memalign", "aligned_alloc", "memalign", "valloc", "pvalloc",
    "mmap", "mmap64", "munmap", "mremap", "sbrk", "brk",
};

struct sampler {
    uint64_t gate;             /* the gate's code page in the process, 0: none;
                                * its data page follows it */
    uint64_t base;             /* the body in the process, 0: none */
    uint64_t size;             /* its bytes (code and data) */
    uint64_t kept;             /* bytes of a body 'prof off' had to leave mapped */
    int64_t inherited_from;    /* the gate came by fork from this process, 0: no */
    uint64_t row_room;         /* rows its data half has room for */
    int mem_fd;                /* /proc/PID/mem of the session's process */
    int watch_fd;              /* the pipe's write end: closed = memprof gone */
    int watch_read;            /* the process's read end, -1: none */
    uint64_t watch_ino;        /* the pipe's inode */
    bool on;
    bool mappings_only;        /* the next sampler_on: mapping slots alone */
    unsigned lg;
    uint64_t generation;
    struct sampler_patch *patches;  /* what the process's patches[] holds */
    size_t npatches;
    struct seccomp_verdict_cache seccomp;  /* the filters' verdict, kept */
};

static const struct sampler_image_header *image_header(void)
{
    return (const struct sampler_image_header *)(const void *)sampler_image;
}

struct sampler *sampler_new(void)
{
    struct sampler *sm = calloc(1, sizeof *sm);
    if (sm) {
        sm->mem_fd = -1;
        sm->watch_fd = -1;
        sm->watch_read = -1;
        sm->lg = 19;
    }
    return sm;
}

void sampler_free(struct sampler *sm)
{
    if (!sm)
        return;
    if (sm->mem_fd >= 0)
        close(sm->mem_fd);
    if (sm->watch_fd >= 0)
        close(sm->watch_fd);
    free(sm->patches);
    free(sm);
}

void sampler_forget(struct sampler *sm)
{
    if (sm->watch_fd >= 0)
        close(sm->watch_fd);
    if (sm->mem_fd >= 0)
        close(sm->mem_fd);
    sm->watch_fd = sm->mem_fd = sm->watch_read = -1;
    sm->watch_ino = 0;
    sm->base = sm->size = sm->row_room = sm->gate = sm->kept = 0;
    sm->inherited_from = 0;
    sm->on = false;
    free(sm->patches);
    sm->patches = NULL;
    sm->npatches = 0;
    sm->seccomp.decided = false;
}

bool sampler_is_on(const struct sampler *sm)
{
    return sm && sm->on;
}

unsigned sampler_lg_sample(const struct sampler *sm)
{
    return sm ? sm->lg : 19;
}

void sampler_set_mappings_only(struct sampler *sm, bool mappings_only)
{
    sm->mappings_only = mappings_only;
}

bool sampler_mappings_only(const struct sampler *sm)
{
    return sm && sm->mappings_only;
}

uint64_t sampler_kept_bytes(const struct sampler *sm)
{
    return sm ? sm->kept : 0;
}

int64_t sampler_inherited_from(const struct sampler *sm)
{
    return sm && sm->gate ? sm->inherited_from : 0;
}

/* ---- the process's memory ---------------------------------------------- */

static int mem_open(struct sampler *sm, struct target *t, struct mp_error *err)
{
    if (sm->mem_fd >= 0)
        return 0;
    char path[96];
    target_proc_dir(t, path, sizeof path - 8);
    strcat(path, "/mem");
    sm->mem_fd = open(path, O_RDWR | O_CLOEXEC);
    if (sm->mem_fd < 0)
        return mp_error_set(err, "cannot open %s: %s", path, strerror(errno));
    return 0;
}

static int mem_io(struct sampler *sm, struct target *t, uint64_t addr, void *buf,
                  size_t len, bool write, struct mp_error *err)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = write ? pwrite(sm->mem_fd, (char *)buf + done, len - done,
                                   (off_t)(addr + done))
                          : pread(sm->mem_fd, (char *)buf + done, len - done,
                                  (off_t)(addr + done));
        if (n <= 0)
            return mp_error_set(err, "cannot %s %zu bytes at %#" PRIx64 " in process %d: %s",
                                write ? "write" : "read", len, addr + done, target_pid(t),
                                n < 0 ? strerror(errno) : "end of its memory");
        done += (size_t)n;
    }
    return 0;
}

static int mem_read(struct sampler *sm, struct target *t, uint64_t addr, void *buf,
                    size_t len, struct mp_error *err)
{
    return mem_io(sm, t, addr, buf, len, false, err);
}

static int mem_write(struct sampler *sm, struct target *t, uint64_t addr, const void *buf,
                     size_t len, struct mp_error *err)
{
    return mem_io(sm, t, addr, (void *)buf, len, true, err);
}

static int ctl_write32(struct sampler *sm, struct target *t, size_t off, uint32_t v,
                       struct mp_error *err)
{
    return mem_write(sm, t, sm->base + SAMPLER_CODE_SIZE + off, &v, sizeof v, err);
}

/* ---- where the sampler may go ------------------------------------------ */

const char *sampler_refusal(struct target *t, const struct allocator_id *a, char *buf,
                            size_t len)
{
    pid_t pid = target_pid(t);
    const struct target_libc *c = target_libc(t);
    if (a->malloc_kind == ALLOCATOR_UNKNOWN)
        snprintf(buf, len, "process %d's malloc() is an allocator memprof does not know, "
                 "so memprof cannot tell which calls are safe to stand in for", (int)pid);
    else if (a->malloc_linked_in)
        snprintf(buf, len, "process %d has its allocator linked into the executable: its "
                 "calls to malloc() are direct, with no call table memprof could point at "
                 "a sampler (a static program, Go, or Rust with a static allocator)", (int)pid);
    else if (!c->mmap || !c->mprotect || !c->syscall || !c->close)
        snprintf(buf, len, "process %d lacks mmap(), mprotect(), close() or syscall() in "
                 "its C library, which memprof needs to map the sampler", (int)pid);
    else if (sampler_image_len > SAMPLER_CODE_SIZE ||
             image_header()->magic != SAMPLER_MAGIC)
        snprintf(buf, len, "this memprof was built without a valid sampler image");
    else
        return NULL;
    return buf;
}

const char *sampler_filter_refusal(struct sampler *sm, struct target *t, char *buf,
                                   size_t len)
{
    return sampler_seccomp_refusal(t, &sm->seccomp, buf, len);
}

/* The way ctl.probe is given at 'prof on'. */
static enum sampler_probe probe_way(const struct sampler *sm)
{
    return sm->seccomp.decided && !sm->seccomp.refusal[0] ? sm->seccomp.probe
                                                          : SAMPLER_PROBE_VM_READV;
}

bool sampler_probes_by_sigmask(const struct sampler *sm)
{
    return probe_way(sm) == SAMPLER_PROBE_SIGMASK;
}

const char *sampler_filter_denied_call(const struct sampler *sm, const char *why)
{
    const struct seccomp_verdict_cache *c = &sm->seccomp;
    if (!c->decided || !c->denied[0] || strcmp(why, c->refusal) != 0)
        return NULL;
    return c->denied;
}

enum seccomp_known sampler_filter_known(struct sampler *sm, struct target *t, int *nfilters,
                                        char *buf, size_t len)
{
    return sampler_seccomp_known(t, &sm->seccomp, nfilters, buf, len);
}

/* ---- what the sampler stands in for ------------------------------------ */

/* The allocator's own function for each name (0: no object defines it). */
static int find_real(struct target *t, const struct mapped_objects *objs,
                     uint64_t real[SF_COUNT], struct mp_error *err)
{
    for (int f = 0; f < SF_COUNT; f++) {
        const struct mapped_object *o = NULL;
        if (link_map_definer(target_pid(t), objs, fn_names[f], &o) < 0)
            return mp_error_set(err, "cannot read the dynamic loader's list of objects "
                                "in process %d", target_pid(t));
        real[f] = o ? mapped_object_function_address(o, fn_names[f]) : 0;
    }
    /* one stand-in serves both names: only where they are one function */
    if (real[SF_MMAP64] != real[SF_MMAP])
        real[SF_MMAP64] = 0;
    if (!real[SF_MALLOC] || !real[SF_FREE] || !real[SF_CALLOC] || !real[SF_REALLOC])
        return mp_error_set(err, "process %d has no plain malloc, free, calloc and realloc "
                            "functions memprof can find (an IFUNC or a missing symbol "
                            "table): the sampler cannot stand in for them", target_pid(t));
    return 0;
}

/* A slot to change: where, what it holds, for which function. */
struct planned_slot {
    uint64_t slot, original;
    unsigned fn;
};

struct slot_plan {
    struct planned_slot *v;
    size_t n, cap;
    size_t objects, skipped;
};

/* Whether a slot's current value is one the sampler may replace: the
 * allocator's function, or (lazy binding, not called yet) a stub in the
 * object's own code that would resolve to it. */
static bool slot_replaceable(const struct mapped_object *o, uint64_t value, uint64_t real)
{
    return value == real || (value >= o->text_start && value < o->text_end);
}

/* The object that defines malloc (the allocator's): its own calls to the
 * mapping functions are its heap's pages, already counted by the heap's
 * samples, so its mapping slots are never changed.  NULL: none found. */
static const struct mapped_object *allocator_object(struct target *t,
                                                    const struct mapped_objects *objs)
{
    const struct mapped_object *o = NULL;
    if (link_map_definer(target_pid(t), objs, "malloc", &o) < 0)
        return NULL;
    return o;
}

/* Which slots a plan may change (a plan that puts slots back has none:
 * every slot holding a stand-in goes back). */
struct plan_rules {
    const struct mapped_object *allocator;  /* allocator_object() */
    bool mappings_only;        /* no slot of malloc and its kin */
};

/* Whether slot name f of object o is left alone: a mapping function's in
 * the allocator's own object, or the heap's functions when the sampler
 * follows mappings alone. */
static bool slot_left_alone(const struct mapped_object *o, const struct plan_rules *r,
                            unsigned f)
{
    return f >= SF_FIRST_MAPPING ? o == r->allocator : r->mappings_only;
}

/* The slots of one object to change: with stand_in NULL, those the
 * sampler may replace (slot_replaceable), but never the allocator's own
 * mapping slots; else those holding stand_in[f] (a gate's stand-ins, to
 * be put back, wherever they are). */
static int plan_object(struct target *t, const struct map_list *maps,
                       const struct mapped_object *o, const uint64_t real[SF_COUNT],
                       const uint64_t *stand_in, const struct plan_rules *rules,
                       struct slot_plan *plan, struct mp_error *err)
{
    int fd = mapped_object_open_file(target_pid(t), maps, o->path);
    if (fd < 0)
        return 0;       /* unreadable: its calls go on unsampled */
    struct elf_got_slots got = {0};
    struct mp_error ignored;
    int rc = elf_got_slots_read(fd, o->path, fn_names, SF_COUNT, &got, &ignored);
    close(fd);
    size_t before = plan->n;
    for (size_t i = 0; rc == 0 && i < got.n; i++) {
        unsigned f = got.v[i].name;
        uint64_t slot = o->bias + got.v[i].addr, value;
        if (!stand_in && slot_left_alone(o, rules, f))
            continue;
        if (!real[f] || remote_read(target_pid(t), slot, &value, sizeof value, &ignored) < 0 ||
            (stand_in ? value != stand_in[f] : !slot_replaceable(o, value, real[f])) ||
            plan->n >= SAMPLER_PATCH_MAX) {
            plan->skipped += real[f] != 0 && !stand_in;
            continue;
        }
        if (plan->n == plan->cap) {
            size_t cap = plan->cap ? plan->cap * 2 : 64;
            struct planned_slot *v = realloc(plan->v, cap * sizeof *v);
            if (!v) {
                rc = mp_error_set(err, "out of memory");
                break;
            }
            plan->v = v;
            plan->cap = cap;
        }
        plan->v[plan->n++] = (struct planned_slot){slot, value, f};
    }
    plan->objects += plan->n > before;
    elf_got_slots_free(&got);
    return rc < 0 ? -1 : 0;
}

static int plan_slots(struct target *t, const struct map_list *maps,
                      const struct mapped_objects *objs, const uint64_t real[SF_COUNT],
                      bool mappings_only, struct slot_plan *plan, struct mp_error *err)
{
    struct plan_rules rules = {allocator_object(t, objs), mappings_only};
    if (!rules.allocator)
        return mp_error_set(err, "cannot tell which object of process %d defines malloc, "
                            "whose own mappings must not be counted twice", target_pid(t));
    for (size_t i = 0; i < objs->n; i++)
        if (plan_object(t, maps, &objs->v[i], real, NULL, &rules, plan, err) < 0)
            return -1;
    if (plan->n == 0)
        return mp_error_set(err, "process %d has no call-table slot for %s memprof could "
                            "point at the sampler", target_pid(t), mappings_only ?
                            "mmap, munmap or mremap outside its allocator" : "malloc or free");
    return 0;
}

/* An object whose stacks stop at its code: counted, and its file's name
 * kept for the first few. */
static void note_no_cfi(struct sampler_on_report *rep, const struct mapped_object *o)
{
    if (rep->no_cfi < SAMPLER_NO_CFI_NAMED) {
        const char *slash = strrchr(o->path, '/');
        snprintf(rep->no_cfi_names[rep->no_cfi], sizeof rep->no_cfi_names[0], "%s",
                 slash ? slash + 1 : o->path);
    }
    rep->no_cfi++;
}

/* Unwind rows for every mapped object.  One without rows is said only
 * when it has code of its own: no stack passes through a data-only one. */
static int build_rows(struct target *t, const struct map_list *maps,
                      const struct mapped_objects *objs, struct cfi_rows *rows,
                      struct sampler_on_report *rep, struct mp_error *err)
{
    for (size_t i = 0; i < objs->n; i++) {
        const struct mapped_object *o = &objs->v[i];
        size_t before = rows->n;
        int fd = mapped_object_open_file(target_pid(t), maps, o->path);
        struct mp_error ignored;
        if ((fd < 0 || cfi_rows_add_elf(rows, fd, o->path, o->bias, &ignored) < 0 ||
             rows->n == before) && (!o->elf || elf_object_has_own_code(o->elf)))
            note_no_cfi(rep, o);
        if (fd >= 0)
            close(fd);
    }
    cfi_rows_finish(rows);
    if (rows->n == 0)
        return mp_error_set(err, "no object of process %d has call-frame information "
                            "(.eh_frame) memprof can read: the sampler could not walk "
                            "a single stack", target_pid(t));
    return 0;
}

/* ---- the stop that maps the region ------------------------------------- */

struct map_job {
    struct target *t;
    struct sampler *sm;
    const uint64_t *real;      /* the allocator's functions, for a new gate */
    uint64_t size;             /* body bytes (0: reuse sm->base, pipe only) */
    int watch_read;            /* out: the process's read end */
    int64_t tgid;              /* out: the process as it sees itself */
    char why[256];             /* the process refused: this says what */
};

static int call_sys(struct remote_stop *s, const struct target_libc *c, long nr,
                    const uint64_t *a, size_t n, int64_t *ret, struct mp_error *err)
{
    uint64_t args[7] = {(uint64_t)nr}, r;
    memcpy(args + 1, a, n * sizeof *a);
    if (remote_stop_call_plain(s, c->syscall, args, n + 1, &r, err) < 0)
        return -1;
    *ret = (int64_t)r;
    return 0;
}

static void close_in_process(struct remote_stop *s, const struct target_libc *c, int fd)
{
    uint64_t a = (uint64_t)fd, r;
    struct mp_error ignored;
    if (fd >= 0 && !s->gone)
        remote_stop_call_plain(s, c->close, &a, 1, &r, &ignored);
}

/* ---- descriptors memprof left in the process -------------------------- */

/* Descriptors of the process to close, each only while it still names
 * what memprof made (its link in /proc: "pipe:[INO]", the sampler's
 * memfd), checked against the stopped thread's own table just before:
 * never a file the program opened since under the same number. */
struct fd_close {
    int fd;
    char link[64];
};

#define FD_CLOSE_MAX 16

#define UNMAP_MAX 4

struct fd_closes {
    struct target *t;
    struct fd_close v[FD_CLOSE_MAX];
    size_t n;
    struct { uint64_t start, len; } unmap[UNMAP_MAX];  /* bodies no thread is in */
    size_t nunmap;
};

static bool fd_names(const char *fd_path, const char *want)
{
    char link[96];
    ssize_t n = readlink(fd_path, link, sizeof link - 1);
    if (n <= 0)
        return false;
    link[n] = 0;
    return strcmp(link, want) == 0;
}

static void pipe_link(uint64_t ino, char *buf, size_t len)
{
    snprintf(buf, len, "pipe:[%" PRIu64 "]", ino);
}

/* Add fd to the list when it names want now (no stop for nothing). */
static void fd_close_add(struct fd_closes *c, int fd, const char *want)
{
    char path[96];
    target_proc_dir(c->t, path, sizeof path - 24);
    snprintf(path + strlen(path), 24, "/fd/%d", fd);
    if (fd < 0 || c->n == FD_CLOSE_MAX || !fd_names(path, want))
        return;
    c->v[c->n].fd = fd;
    snprintf(c->v[c->n].link, sizeof c->v[c->n].link, "%s", want);
    c->n++;
}

static int fd_close_body(struct remote_stop *s, void *arg, struct mp_error *err)
{
    (void)err;
    struct fd_closes *c = arg;
    for (size_t i = 0; i < c->n && !s->gone; i++) {
        char path[96];
        snprintf(path, sizeof path, "/proc/%d/task/%d/fd/%d", s->ctx->pid, s->tid,
                 c->v[i].fd);
        if (fd_names(path, c->v[i].link))
            close_in_process(s, target_libc(c->t), c->v[i].fd);
    }
    for (size_t i = 0; i < c->nunmap && !s->gone; i++) {
        uint64_t a[2] = {c->unmap[i].start, c->unmap[i].len}, r;
        struct mp_error ignored;
        remote_stop_call_plain(s, target_libc(c->t)->munmap, a, 2, &r, &ignored);
    }
    return 0;
}

static int fd_close_run(struct fd_closes *c, struct mp_error *err)
{
    if ((c->n == 0 && c->nunmap == 0) || target_calls_refused(c->t))
        return 0;
    return target_stop_run(c->t, fd_close_body, c, err);
}

/* ---- the stop that maps the region (continued) ------------------------- */

/* The pipe: the sampler makes it in the process (make_watch, which
 * records both ends in the region before it returns), memprof takes the
 * write end (pidfd_getfd) and the process closes its copy. */
static int make_watch(struct remote_stop *s, struct map_job *j, struct mp_error *err)
{
    struct sampler *sm = j->sm;
    uint64_t none[1] = {0}, r;
    int32_t rfd, wfd;
    uint64_t ino;
    if (remote_stop_call_plain(s, sm->base + image_header()->make_watch, none, 0, &r, err) < 0)
        return -1;
    if ((int64_t)r < 0) {
        snprintf(j->why, sizeof j->why, "pipe2() failed in process %d (%s)",
                 s->ctx->pid, strerror((int)-(int64_t)r));
        return 0;
    }
    if (remote_stop_read(s, sm->base + DATA_OFF(ctl.watch_fd), &rfd, sizeof rfd, err) < 0 ||
        remote_stop_read(s, sm->base + DATA_OFF(ctl.watch_write), &wfd, sizeof wfd, err) < 0 ||
        remote_stop_read(s, sm->base + DATA_OFF(ctl.watch_ino), &ino, sizeof ino, err) < 0)
        return -1;
    /* what the process's memory says is checked against its table */
    char path[96], want[64];
    pipe_link(ino, want, sizeof want);
    snprintf(path, sizeof path, "/proc/%d/task/%d/fd/%d", s->ctx->pid, s->tid, wfd);
    int pidfd = fd_names(path, want) ? (int)syscall(SYS_pidfd_open, s->ctx->pid, 0) : -1;
    sm->watch_fd = pidfd < 0 ? -1 : (int)syscall(SYS_pidfd_getfd, pidfd, wfd, 0);
    if (pidfd >= 0)
        close(pidfd);
    if (sm->watch_fd < 0) {
        snprintf(j->why, sizeof j->why, "memprof cannot take the sampler's pipe from process "
                 "%d (pidfd_getfd: %s; Linux 5.6 or later is needed)", s->ctx->pid,
                 strerror(errno));
    } else
        fcntl(sm->watch_fd, F_SETFD, FD_CLOEXEC);
    struct fd_closes ends = {.t = j->t};
    fd_close_add(&ends, wfd, want);
    if (sm->watch_fd < 0)
        fd_close_add(&ends, rfd, want);
    fd_close_body(s, &ends, err);
    if (sm->watch_fd < 0)
        return 0;
    sm->watch_read = j->watch_read = rfd;
    sm->watch_ino = ino;
    return 0;
}

/* A memfd named name in the process, len bytes, holding img, filled from
 * memprof's side: *fd is the process's descriptor, or -1 with j->why. */
static int memfd_filled(struct remote_stop *s, struct map_job *j, const char *name,
                        uint64_t len, const void *img, size_t img_len, int64_t *fd,
                        struct mp_error *err)
{
    const struct target_libc *c = target_libc(j->t);
    uint64_t at, sp;
    if (remote_stop_scratch(s, 64, &at, &sp, err) < 0 ||
        remote_stop_write(s, at, name, strlen(name) + 1, err) < 0)
        return -1;
    uint64_t a[2] = {at, 1 /* MFD_CLOEXEC */};
    if (call_sys(s, c, SYS_memfd_create, a, 2, fd, err) < 0)
        return -1;
    if (*fd < 0) {
        snprintf(j->why, sizeof j->why, "memfd_create() failed in process %d (%s)",
                 s->ctx->pid, strerror((int)-*fd > 0 ? (int)-*fd : EINVAL));
        *fd = -1;
        return 0;
    }
    char path[96];
    snprintf(path, sizeof path, "/proc/%d/task/%d/fd/%d", s->ctx->pid, s->tid, (int)*fd);
    int local = open(path, O_RDWR | O_CLOEXEC);
    if (local < 0 || ftruncate(local, (off_t)len) < 0 ||
        pwrite(local, img, img_len, 0) != (ssize_t)img_len) {
        snprintf(j->why, sizeof j->why, "memprof cannot fill the sampler's memfd in "
                 "process %d (%s)", s->ctx->pid, strerror(errno));
        close_in_process(s, c, (int)*fd);
        *fd = -1;
    }
    if (local >= 0)
        close(local);
    return 0;
}

/* mmap in the process: *out the address, 0 when it refused. */
static int map_call(struct remote_stop *s, const struct target_libc *c, uint64_t addr,
                    uint64_t len, uint64_t prot, uint64_t flags, int64_t fd, uint64_t *out,
                    struct mp_error *err)
{
    uint64_t m[6] = {addr, len, prot, flags, (uint64_t)fd, 0}, r;
    if (remote_stop_call_plain(s, c->mmap, m, 6, &r, err) < 0)
        return -1;
    *out = r == (uint64_t)-1 || (addr && r != addr) ? 0 : r;
    return 0;
}

/* Code from fd (read+exec) at a new address, then private anonymous
 * read+write memory over it from code bytes on, then advice on the
 * anonymous part (gate: wiped on fork) or all of it (body: not copied by
 * fork): *at 0 with j->why when the process refused any of it (nothing
 * left mapped). */
static int map_two_part(struct remote_stop *s, struct map_job *j, int64_t fd, uint64_t code,
                        uint64_t total, int advice, bool advise_all, uint64_t *at,
                        struct mp_error *err)
{
    const struct target_libc *c = target_libc(j->t);
    uint64_t data = 0, r;
    *at = 0;
    if (map_call(s, c, 0, total, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, at, err) < 0)
        return -1;
    if (!*at) {
        snprintf(j->why, sizeof j->why, "process %d refused to map the sampler's code "
                 "executable (a security policy: SELinux execmem, PR_SET_MDWE, or its "
                 "memory limit)", s->ctx->pid);
        return 0;
    }
    if (map_call(s, c, *at + code, total - code, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, &data, err) < 0)
        return -1;
    uint64_t adv[3] = {advise_all ? *at : *at + code, advise_all ? total : total - code,
                       (uint64_t)advice};
    int64_t ret = -1;
    if (data && call_sys(s, c, SYS_madvise, adv, 3, &ret, err) < 0)
        return -1;
    if (ret != 0) {
        snprintf(j->why, sizeof j->why, "process %d refused the sampler's %s (%s)",
                 s->ctx->pid, !data ? "data mapping (its memory limit)" :
                 advice == MADV_WIPEONFORK ? "page wiped on fork (MADV_WIPEONFORK, Linux 4.14)"
                                           : "mapping not copied by fork (MADV_DONTFORK)",
                 data ? strerror((int)-ret > 0 ? (int)-ret : EINVAL) : "mmap failed");
        uint64_t un[2] = {*at, total};
        remote_stop_call_plain(s, c->munmap, un, 2, &r, err);
        *at = 0;
    }
    return 0;
}

/* The gate: its code page (the image's first, with the allocator's
 * functions and the process's pid in its header) in a memfd of its own,
 * and its data page, wiped on fork, marked as the process's own. */
static int map_gate(struct remote_stop *s, struct map_job *j, struct mp_error *err)
{
    unsigned char page[PAGE];
    struct sampler_image_header h;
    memcpy(page, sampler_image, sizeof page);
    memcpy(&h, page, sizeof h);
    memcpy(h.real, j->real, sizeof h.real);
    h.pid = j->tgid;
    memcpy(page, &h, sizeof h);
    int64_t fd;
    uint64_t at;
    if (memfd_filled(s, j, REGION_NAME, sizeof page, page, sizeof page, &fd, err) < 0)
        return -1;
    if (fd < 0)
        return 0;
    int rc = map_two_part(s, j, fd, PAGE, 2 * PAGE, MADV_WIPEONFORK, false, &at, err);
    close_in_process(s, target_libc(j->t), (int)fd);
    uint64_t mark = SAMPLER_OWNER_MARK;
    if (rc < 0 || !at)
        return rc;
    j->sm->gate = at;
    j->sm->inherited_from = 0;
    return remote_stop_write(s, at + PAGE + offsetof(struct sampler_gate, mark), &mark,
                             sizeof mark, err);
}

/* The body: the whole image in a memfd, its data anonymous, neither
 * copied by fork; a control block from the start, so that a memprof
 * killed once it is mapped leaves one the next session recognises. */
static int map_body_region(struct remote_stop *s, struct map_job *j, struct mp_error *err)
{
    int64_t fd;
    uint64_t at;
    if (memfd_filled(s, j, BODY_NAME, SAMPLER_CODE_SIZE, sampler_image, sampler_image_len,
                     &fd, err) < 0)
        return -1;
    if (fd < 0)
        return 0;
    int rc = map_two_part(s, j, fd, SAMPLER_CODE_SIZE, j->size, MADV_DONTFORK, true, &at, err);
    close_in_process(s, target_libc(j->t), (int)fd);
    if (rc < 0 || !at)
        return rc;
    struct sampler_ctl ctl = {
        .magic = SAMPLER_MAGIC, .abi = SAMPLER_ABI, .state = SAMPLER_OFF,
        .watch_fd = -1, .watch_write = -1, .memprof_pid = getpid(),
        .gate = j->sm->gate + PAGE, .data_bytes = j->size - SAMPLER_CODE_SIZE,
    };
    j->sm->base = at;
    j->sm->size = j->size;
    return remote_stop_write(s, at + SAMPLER_CODE_SIZE, &ctl, sizeof ctl, err);
}

/* Both ends of the pipe closed: memprof's, and the process's in a stop
 * (when that stop cannot be made, one descriptor stays in the process);
 * in the same stop the body unmapped, when unmap says no thread is in it. */
static void drop_watch(struct sampler *sm, struct target *t, bool unmap)
{
    struct mp_error ignored;
    if (sm->watch_fd >= 0)
        close(sm->watch_fd);
    sm->watch_fd = -1;
    struct fd_closes c = {.t = t};
    if (sm->watch_ino) {
        char want[64];
        pipe_link(sm->watch_ino, want, sizeof want);
        fd_close_add(&c, sm->watch_read, want);
    }
    if (unmap && sm->base) {
        c.unmap[c.nunmap].start = sm->base;
        c.unmap[c.nunmap++].len = sm->size;
    }
    if (fd_close_run(&c, &ignored) == 0 && unmap && sm->base) {
        sm->base = sm->size = sm->row_room = 0;
        sm->kept = 0;
    }
    sm->watch_read = -1;
    sm->watch_ino = 0;
}

static int map_body(struct remote_stop *s, void *arg, struct mp_error *err)
{
    struct map_job *j = arg;
    uint64_t none[1] = {0};
    if (call_sys(s, target_libc(j->t), SYS_getpid, none, 0, &j->tgid, err) < 0)
        return -1;
    if (!j->sm->gate && (map_gate(s, j, err) < 0 || j->why[0]))
        return j->why[0] ? 0 : -1;
    if (j->size && (map_body_region(s, j, err) < 0 || j->why[0]))
        return j->why[0] ? 0 : -1;
    return make_watch(s, j, err);
}

/* ---- the data ---------------------------------------------------------- */

static bool gate_drained(struct sampler *sm, struct target *t, uint64_t gd);
static void release_body(struct sampler *sm, struct target *t);

/* The gate made the process's own (a gate inherited by fork names its
 * parent and has its page wiped), pointed at this body and opened: the
 * stand-ins enter the body from now on. */
static int gate_open(struct sampler *sm, struct target *t, int64_t tgid, struct mp_error *err)
{
    const struct sampler_image_header *h = image_header();
    uint64_t gd = sm->gate + PAGE, body[SF_COUNT], mark = SAMPLER_OWNER_MARK;
    for (int f = 0; f < SF_COUNT; f++)
        body[f] = sm->base + h->body[f];
    if (sm->inherited_from &&
        mem_write(sm, t, sm->gate + offsetof(struct sampler_image_header, pid), &tgid,
                  sizeof tgid, err) < 0)
        return -1;
    sm->inherited_from = 0;
    if (mem_write(sm, t, gd + offsetof(struct sampler_gate, mark), &mark, sizeof mark, err) < 0 ||
        mem_write(sm, t, gd + offsetof(struct sampler_gate, body), body, sizeof body, err) < 0)
        return -1;
    uint32_t on = SAMPLER_ON;
    return mem_write(sm, t, gd + offsetof(struct sampler_gate, state), &on, sizeof on, err);
}

/* Everything but the call table's patches: state ON last. */
static int data_fill(struct sampler *sm, struct target *t, const uint64_t real[SF_COUNT],
                     const struct cfi_rows *rows, const struct map_job *j,
                     struct mp_error *err)
{
    uint64_t data = sm->base + SAMPLER_CODE_SIZE;
    if (ctl_write32(sm, t, offsetof(struct sampler_data, ctl.state), SAMPLER_OFF, err) < 0)
        return -1;
    /* the samples of an earlier 'prof on' are forgotten */
    size_t clear = offsetof(struct sampler_data, patches) - offsetof(struct sampler_data, threads);
    void *zero = calloc(1, clear);
    if (!zero)
        return mp_error_set(err, "out of memory");
    int rc = mem_write(sm, t, data + offsetof(struct sampler_data, threads), zero, clear, err);
    free(zero);
    if (rc < 0 || mem_write(sm, t, data + offsetof(struct sampler_data, rows), rows->v,
                            rows->n * sizeof(struct sampler_row), err) < 0)
        return -1;
    struct sampler_ctl ctl = {
        .magic = SAMPLER_MAGIC, .abi = SAMPLER_ABI, .state = SAMPLER_OFF,
        .generation = ++sm->generation, .tgid = j->tgid, .watch_fd = j->watch_read,
        .lg_sample = sm->lg, .nrows = rows->n, .memprof_pid = getpid(),
        .watch_ino = sm->watch_ino, .watch_write = -1, .gate = sm->gate + PAGE,
        .probe = probe_way(sm),
        .data_bytes = sm->size - SAMPLER_CODE_SIZE,
    };
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ctl.seed = (uint64_t)ts.tv_nsec * UINT64_C(0x9e3779b97f4a7c15) ^ (uint64_t)getpid();
    memcpy(ctl.real, real, sizeof ctl.real);
    if (mem_write(sm, t, data, &ctl, sizeof ctl, err) < 0 ||
        ctl_write32(sm, t, offsetof(struct sampler_data, ctl.state), SAMPLER_ON, err) < 0)
        return -1;
    return gate_open(sm, t, j->tgid, err);
}

/* Each slot: recorded in the process (patch, then the count), then
 * written.  A memprof killed between any two writes leaves a record of
 * every slot it changed. */
static int patch_slots(struct sampler *sm, struct target *t, const struct slot_plan *plan,
                       struct mp_error *err)
{
    uint64_t data = sm->base + SAMPLER_CODE_SIZE;
    const struct sampler_image_header *h = image_header();
    free(sm->patches);
    sm->patches = calloc(plan->n ? plan->n : 1, sizeof *sm->patches);
    sm->npatches = 0;
    if (!sm->patches)
        return mp_error_set(err, "out of memory");
    for (size_t i = 0; i < plan->n; i++) {
        struct sampler_patch p = {plan->v[i].slot, plan->v[i].original,
                                  sm->gate + h->wrapper[plan->v[i].fn]};
        uint64_t count = i + 1;
        if (mem_write(sm, t, data + offsetof(struct sampler_data, patches) + i * sizeof p,
                      &p, sizeof p, err) < 0 ||
            mem_write(sm, t, data + offsetof(struct sampler_data, ctl.npatches), &count,
                      sizeof count, err) < 0)
            return -1;
        sm->patches[sm->npatches++] = p;
        if (mem_write(sm, t, p.slot, &p.wrapper, sizeof p.wrapper, err) < 0)
            return -1;
    }
    return 0;
}

static double ms_since(const struct timespec *a)
{
    struct timespec b;
    clock_gettime(CLOCK_MONOTONIC, &b);
    return (double)(b.tv_sec - a->tv_sec) * 1e3 + (double)(b.tv_nsec - a->tv_nsec) / 1e6;
}

static uint64_t region_bytes(size_t nrows)
{
    uint64_t n = SAMPLER_CODE_SIZE + sizeof(struct sampler_data) +
                 (uint64_t)nrows * sizeof(struct sampler_row);
    return (n + 0xfff) & ~UINT64_C(0xfff);
}

/* The map stop: a new region when there is none with room, else a pipe. */
static int stop_for_region(struct sampler *sm, struct target *t, size_t nrows,
                           const uint64_t real[SF_COUNT], struct map_job *j,
                           struct sampler_on_report *rep, struct mp_error *err)
{
    *j = (struct map_job){.t = t, .sm = sm, .watch_read = -1, .real = real};
    rep->reused = sm->gate != 0;
    if (sm->base && sm->row_room < nrows)
        release_body(sm, t);        /* too small: a new one (or both kept) */
    if (!sm->base)
        j->size = region_bytes(nrows + nrows / 4);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    unsigned stops = target_pauses(t)->calls;
    if (target_stop_run(t, map_body, j, err) < 0)
        return -1;
    /* the thread's own pause, apart from memprof's choosing of it (its
     * threads listed and looked at: milliseconds in a server of hundreds) */
    rep->stop_wall_ms = ms_since(&t0);
    rep->stop_us = target_pauses(t)->calls != stops ? target_pauses(t)->last_us
                                                     : rep->stop_wall_ms * 1e3;
    if (j->why[0])
        return mp_error_set(err, "%s; the sampler was not put in", j->why);
    if (j->size)
        sm->row_room = (sm->size - SAMPLER_CODE_SIZE - sizeof(struct sampler_data)) /
                       sizeof(struct sampler_row);
    if (sm->row_room < nrows)
        return mp_error_set(err, "an earlier sampler's body is still mapped in process %d "
                            "(a thread was inside it) and has no room for %zu unwind rows; "
                            "'prof on' again once its call returned", target_pid(t), nrows);
    return 0;
}

int sampler_on(struct sampler *sm, struct target *t, const struct allocator_id *a,
               unsigned lg, struct sampler_on_report *rep, struct mp_error *err)
{
    memset(rep, 0, sizeof *rep);
    char why[512];
    if (sampler_refusal(t, a, why, sizeof why))
        return mp_error_set(err, "%s", why);
    if (sm->on)
        return 0;
    uint64_t real[SF_COUNT];
    struct map_list maps = {0};
    struct mapped_objects objs = {0};   /* as mapped now: libraries dlopen'd
                                         * since attach included */
    struct slot_plan plan = {0};
    struct cfi_rows rows = {0};
    struct map_job j;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    sm->lg = lg;
    int rc = -1;
    if (mem_open(sm, t, err) < 0 || maps_read_pid(target_pid(t), &maps, err) < 0 ||
        mapped_objects_load(target_pid(t), &maps, &objs, err) < 0 ||
        find_real(t, &objs, real, err) < 0 ||
        plan_slots(t, &maps, &objs, real, sm->mappings_only, &plan, err) < 0 ||
        build_rows(t, &maps, &objs, &rows, rep, err) < 0)
        goto out;
    rep->build_ms = ms_since(&t0);
    if (stop_for_region(sm, t, rows.n, real, &j, rep, err) < 0 ||
        data_fill(sm, t, real, &rows, &j, err) < 0)
        goto out;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    sm->on = true;      /* from the first slot on, 'prof off' has work to do */
    if (patch_slots(sm, t, &plan, err) < 0) {
        struct mp_error ignored;
        sampler_off(sm, t, &ignored);
        goto out;
    }
    rep->patch_ms = ms_since(&t0);
    rep->objects = plan.objects;
    rep->slots = plan.n;
    rep->skipped = plan.skipped;
    rep->rows = rows.n;
    rc = 0;
out:
    if (rc < 0 && !sm->on)
        drop_watch(sm, t, true);  /* no slot points at the gate: nobody is in the body */
    maps_free(&maps);
    mapped_objects_free(&objs);
    free(plan.v);
    cfi_rows_free(&rows);
    return rc;
}

int sampler_set_rate(struct sampler *sm, struct target *t, unsigned lg, struct mp_error *err)
{
    sm->lg = lg;
    if (!sm->base)
        return 0;
    return ctl_write32(sm, t, offsetof(struct sampler_data, ctl.lg_sample), lg, err);
}

/* Put back each recorded slot that still holds its stand-in (a slot the
 * program or its loader changed since is its own business now). */
static long restore_patches(struct sampler *sm, struct target *t,
                            const struct sampler_patch *p, size_t n, struct mp_error *err)
{
    long restored = 0;
    size_t failed = 0;
    struct mp_error one;
    for (size_t i = 0; i < n; i++) {
        uint64_t value;
        if (mem_read(sm, t, p[i].slot, &value, sizeof value, &one) < 0)
            continue;   /* unmapped since (dlclose): nothing to put back */
        if (value != p[i].wrapper)
            continue;
        if (mem_write(sm, t, p[i].slot, &p[i].original, sizeof p[i].original, &one) < 0) {
            if (!failed++)
                *err = one;
            continue;
        }
        restored++;
    }
    if (failed)
        return mp_error_prefix(err, "%zu of process %d's call-table slots still point at "
                               "the sampler (it passes their calls straight through)",
                               failed, target_pid(t));
    return restored;
}

/* Whether no thread is inside the body behind the gate whose data page is
 * at gd, and none can enter it: the gate closed (state OFF), then every
 * lane read 0 (abi.h).  A thread inside is in a call to the allocator,
 * which returns: the lanes are read again for about three seconds. */
static bool gate_drained(struct sampler *sm, struct target *t, uint64_t gd)
{
    uint32_t off = SAMPLER_OFF;
    struct mp_error ignored;
    if (mem_write(sm, t, gd + offsetof(struct sampler_gate, state), &off, sizeof off,
                  &ignored) < 0)
        return false;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);    /* the state out before the lanes are read */
    for (useconds_t wait = 50;; wait *= 2) {
        struct sampler_gate g;
        if (mem_read(sm, t, gd, &g, sizeof g, &ignored) < 0)
            return false;
        bool any = false;
        for (unsigned i = 0; i < SAMPLER_GATE_LANES; i++)
            any |= g.lanes[i].inside != 0;
        if (!any)
            return true;
        if (wait > 1600000)     /* read after every wait: 3.3 s of them in all */
            return false;
        usleep(wait);
    }
}

/* A body kept by an earlier 'prof off' (a thread was inside) unmapped now
 * if no thread is. */
static void release_body(struct sampler *sm, struct target *t)
{
    if (sm->base && !sm->on && gate_drained(sm, t, sm->gate + PAGE))
        drop_watch(sm, t, true);
}

long sampler_off(struct sampler *sm, struct target *t, struct mp_error *err)
{
    if (!sm->on)
        return 0;
    long restored = restore_patches(sm, t, sm->patches, sm->npatches, err);
    struct mp_error ignored;
    uint64_t zero = 0;
    if (restored >= 0)
        mem_write(sm, t, sm->base + DATA_OFF(ctl.npatches), &zero, sizeof zero, &ignored);
    ctl_write32(sm, t, offsetof(struct sampler_data, ctl.state), SAMPLER_OFF, &ignored);
    bool drained = gate_drained(sm, t, sm->gate + PAGE);
    drop_watch(sm, t, drained && restored >= 0);
    sm->kept = sm->base ? sm->size : 0;
    sm->on = restored < 0;      /* slots left: still 'on' for the next try */
    return restored;
}

/* ---- reading the samples ----------------------------------------------- */

static bool entry_sound(const struct sampler_entry *a, const struct sampler_entry *b)
{
    return a->seq == b->seq && !(a->seq & 1) && a->seq == a->seq_end && a->ptr &&
           a->nframes <= SAMPLER_MAX_FRAMES && a->kind <= SAMPLER_KIND_MAPPING &&
           memcmp(a, b, sizeof *a) == 0;
}

/* The live entries of one table of cap at `at`, each read twice, added
 * to out[*n]: one that changed while memprof read it (a sample being
 * taken or freed right then) is left out, not guessed. */
static int read_table(struct sampler *sm, struct target *t, uint64_t at, size_t cap,
                      struct sampler_entry *out, size_t *n, size_t *unsound,
                      struct mp_error *err)
{
    size_t bytes = sizeof(struct sampler_entry) * cap;
    struct sampler_entry *a = malloc(bytes), *b = malloc(bytes);
    int rc = -1;
    if (!a || !b)
        mp_error_set(err, "out of memory");
    else if (mem_read(sm, t, at, a, bytes, err) == 0 && mem_read(sm, t, at, b, bytes, err) == 0)
        rc = 0;
    for (size_t i = 0; rc == 0 && i < cap; i++) {
        if (entry_sound(&a[i], &b[i]))
            out[(*n)++] = a[i];
        else if (a[i].ptr || b[i].ptr || a[i].seq != b[i].seq)
            (*unsound)++;
    }
    free(a);
    free(b);
    return rc;
}

/* A mapping's sample ends with the marker frame (synthetic_frames.h), its
 * outermost: the last frame gives way to it at the limit. */
static void mark_mapping(struct sampler_entry *e)
{
    if (e->nframes == SAMPLER_MAX_FRAMES)
        e->nframes--;
    e->frames[e->nframes++] = PROFILE_FRAME_MAPPING;
}

/* The live samples: the heap's and the mappings'. */
static int read_entries(struct sampler *sm, struct target *t, struct sampler_entry **out,
                        size_t *n, size_t *unsound, struct mp_error *err)
{
    struct sampler_entry *e = malloc(sizeof *e * (SAMPLER_TABLE_CAP + SAMPLER_MAPS_CAP));
    *n = *unsound = 0;
    if (!e)
        return mp_error_set(err, "out of memory");
    size_t heap = 0;
    if (read_table(sm, t, sm->base + DATA_OFF(entries), SAMPLER_TABLE_CAP, e, n, unsound,
                   err) < 0 ||
        (heap = *n, read_table(sm, t, sm->base + DATA_OFF(map_entries), SAMPLER_MAPS_CAP,
                               e, n, unsound, err) < 0)) {
        free(e);
        return -1;
    }
    for (size_t i = 0; i < *n; i++)
        if (i >= heap || e[i].kind == SAMPLER_KIND_MAPPING)
            mark_mapping(&e[i]);
    *out = e;
    return 0;
}

static int by_stack(const void *x, const void *y)
{
    const struct sampler_entry *a = x, *b = y;
    if (a->nframes != b->nframes)
        return a->nframes < b->nframes ? -1 : 1;
    return memcmp(a->frames, b->frames, a->nframes * sizeof a->frames[0]);
}

/* jemalloc's heap_v2: one '@' line per distinct stack with its live
 * samples' count and bytes; nothing for allocated-and-freed ([0: 0]). */
static void write_heap_v2(FILE *f, unsigned lg, struct sampler_entry *e, size_t n)
{
    uint64_t bytes = 0;
    for (size_t i = 0; i < n; i++)
        bytes += e[i].size;
    fprintf(f, "heap_v2/%" PRIu64 "\n  t*: %zu: %" PRIu64 " [0: 0]\n",
            UINT64_C(1) << (lg & 63), n, bytes);
    qsort(e, n, sizeof *e, by_stack);
    for (size_t i = 0; i < n;) {
        size_t k = i;
        uint64_t sum = 0;
        for (; k < n && by_stack(&e[i], &e[k]) == 0; k++)
            sum += e[k].size;
        fputc('@', f);
        for (uint32_t fr = 0; fr < e[i].nframes; fr++)
            fprintf(f, " 0x%" PRIx64, e[i].frames[fr]);
        fprintf(f, "\n  t*: %zu: %" PRIu64 " [0: 0]\n", k - i, sum);
        i = k;
    }
}

int sampler_dump(struct sampler *sm, struct target *t, char **data, size_t *len,
                 struct sampler_dump_info *info, struct mp_error *err)
{
    memset(info, 0, sizeof *info);
    if (!sm->base)
        return mp_error_set(err, "no sampler is in process %d: 'prof on' first",
                            target_pid(t));
    struct sampler_ctl ctl;
    struct sampler_entry *e = NULL;
    size_t n;
    if (mem_read(sm, t, sm->base + DATA_OFF(ctl), &ctl, sizeof ctl, err) < 0 ||
        read_entries(sm, t, &e, &n, &info->unreadable, err) < 0)
        return -1;
    info->samples = ctl.samples;
    info->dropped = ctl.dropped;
    info->truncated = ctl.truncated;
    info->live = n;
    info->live_max = SAMPLER_TABLE_LIVE;
    info->maps_max = SAMPLER_MAPS_CAP;
    info->orphaned = ctl.state == SAMPLER_ORPHAN;
    char *maps = NULL;
    size_t maps_len = 0;
    if (maps_read_text_pid(target_pid(t), &maps, &maps_len, err) < 0) {
        free(e);
        return -1;
    }
    FILE *f = open_memstream(data, len);
    if (!f) {
        free(e);
        free(maps);
        return mp_error_set(err, "out of memory");
    }
    write_heap_v2(f, ctl.lg_sample <= 62 ? ctl.lg_sample : sm->lg, e, n);
    fputs("\nMAPPED_LIBRARIES:\n", f);
    fwrite(maps, 1, maps_len, f);
    free(e);
    free(maps);
    if (fclose(f) != 0)
        return mp_error_set(err, "out of memory");
    return 0;
}

/* ---- what a memprof that is gone left, or fork gave ------------------- */

/* The mapping starting where e ends, when it is private anonymous
 * read+write (a gate's or a body's data). */
static const struct map_entry *anon_after(const struct map_list *maps, const struct map_entry *e)
{
    const struct map_entry *n = maps_find(maps, e->end);
    return n && n->start == e->end && n->r && n->w && !n->x && !n->shared && !n->path[0]
               ? n : NULL;
}

static bool code_mapping_of(const struct map_entry *e, const char *name, uint64_t bytes)
{
    char want[64];
    snprintf(want, sizeof want, "/memfd:%s", name);
    return e->x && e->offset == 0 && strcmp(e->path, want) == 0 && e->end - e->start == bytes;
}

/* The process's pid as it sees itself (what a gate records). */
static int64_t own_pid(struct target *t)
{
    char path[96];
    struct proc_status st;
    target_proc_dir(t, path, sizeof path - 8);
    strcat(path, "/status");
    return preflight_read_status(path, &st) == 0 && st.nspid_inner > 0 ? st.nspid_inner
                                                                       : target_pid(t);
}

struct sweep {
    struct sampler *sm;
    struct target *t;
    const struct map_list *maps;
    struct fd_closes fds;
    int64_t pid;               /* own_pid */
    int left, inherited, kept;
    long restored;
    int64_t gone, parent;      /* the memprof that left one; the process a gate came from */
    bool failed;               /* some slots could not be put back */
};

/* Slots put back (or -1: some could not be). */
static void sweep_count(struct sweep *w, long restored)
{
    if (restored < 0)
        w->failed = true;
    else
        w->restored += restored;
}

/* The slots of the process holding one of the gate's stand-ins, put back to
 * the allocator's functions (a gate inherited by fork comes without the
 * list of slots, which is in the body's data: every call table is read). */
static long unpoint_gate(struct sampler *sm, struct target *t, const struct map_list *maps,
                         uint64_t gate, struct mp_error *err)
{
    struct mapped_objects objs = {0};
    struct slot_plan plan = {0};
    uint64_t real[SF_COUNT], stand_in[SF_COUNT];
    for (int f = 0; f < SF_COUNT; f++)
        stand_in[f] = gate + image_header()->wrapper[f];
    long rc = -1;
    if (mapped_objects_load(target_pid(t), maps, &objs, err) == 0 &&
        find_real(t, &objs, real, err) == 0) {
        rc = 0;
        for (size_t i = 0; rc == 0 && i < objs.n; i++)
            rc = plan_object(t, maps, &objs.v[i], real, stand_in, NULL, &plan, err);
    }
    struct sampler_patch *p = rc == 0 ? calloc(plan.n ? plan.n : 1, sizeof *p) : NULL;
    for (size_t i = 0; p && i < plan.n; i++)
        p[i] = (struct sampler_patch){plan.v[i].slot, real[plan.v[i].fn],
                                      stand_in[plan.v[i].fn]};
    if (rc == 0)
        rc = p ? restore_patches(sm, t, p, plan.n, err) : mp_error_set(err, "out of memory");
    free(p);
    free(plan.v);
    mapped_objects_free(&objs);
    return rc;
}

/* Whether the region at start holds this memprof's code: the header up to
 * what memprof fills, and the code after it. */
static bool our_code(struct sampler *sm, struct target *t, uint64_t start, size_t len)
{
    unsigned char *code = malloc(len);
    size_t head = offsetof(struct sampler_image_header, real);
    size_t rest = sizeof(struct sampler_image_header);
    struct mp_error ignored;
    bool ours = code && mem_read(sm, t, start, code, len, &ignored) == 0 &&
                memcmp(code, sampler_image, head) == 0 &&
                memcmp(code + rest, sampler_image + rest, len - rest) == 0;
    free(code);
    return ours;
}

/* A gate (its code page, its data page after it): one inherited by fork
 * has every slot pointing at it put back; this memprof's kind is adopted
 * for the next 'prof on'.  A gate is never unmapped (abi.h). */
static void sweep_gate(struct sweep *w, const struct map_entry *e)
{
    struct sampler_image_header h;
    struct mp_error one;
    const struct map_entry *d = anon_after(w->maps, e);
    if (!d || d->end - d->start < PAGE ||
        mem_read(w->sm, w->t, e->start, &h, sizeof h, &one) < 0 ||
        h.magic != SAMPLER_MAGIC || h.abi != SAMPLER_ABI)
        return;
    bool ours = our_code(w->sm, w->t, e->start, PAGE);
    if (h.pid != w->pid && ours) {
        long r = unpoint_gate(w->sm, w->t, w->maps, e->start, &one);
        if (r != 0) {           /* once put back, 'info' alone says what stays */
            w->inherited++;
            w->parent = h.pid;
            sweep_count(w, r);
        }
    }
    if (ours && !w->sm->gate) {
        w->sm->gate = e->start;
        w->sm->inherited_from = h.pid != w->pid ? h.pid : 0;
    }
}

/* A body: its recorded slots put back (those still holding a stand-in of
 * its gate), its pipe's ends closed, its gate closed, and once no thread
 * is inside it, unmapped; else adopted to be unmapped later. */
static void sweep_body(struct sweep *w, const struct map_entry *e)
{
    struct sampler *sm = w->sm;
    struct sampler_ctl ctl;
    struct mp_error one, ignored;
    const struct map_entry *d = anon_after(w->maps, e);
    if (!d || mem_read(sm, w->t, e->start + SAMPLER_CODE_SIZE, &ctl, sizeof ctl, &one) < 0 ||
        ctl.magic != SAMPLER_MAGIC || ctl.abi != SAMPLER_ABI ||
        ctl.npatches > SAMPLER_PATCH_MAX || ctl.data_bytes > d->end - d->start ||
        ctl.data_bytes < sizeof(struct sampler_data) || (ctl.gate & (PAGE - 1)))
        return;
    const struct map_entry *g = maps_find(w->maps, ctl.gate - PAGE);
    bool gated = g && g->start == ctl.gate - PAGE && code_mapping_of(g, REGION_NAME, PAGE) &&
                 anon_after(w->maps, g);
    struct sampler_patch *p = calloc(ctl.npatches ? ctl.npatches : 1, sizeof *p);
    long restored = p ? 0 : -1;
    if (p && mem_read(sm, w->t, e->start + DATA_OFF(patches), p, ctl.npatches * sizeof *p,
                      &one) < 0)
        restored = -1;
    size_t keep = 0;
    for (size_t i = 0; restored == 0 && i < ctl.npatches; i++)
        if (p[i].wrapper >= ctl.gate - PAGE && p[i].wrapper < ctl.gate)
            p[keep++] = p[i];   /* a stand-in of its gate: never another address */
    if (restored == 0)
        restored = restore_patches(sm, w->t, p, keep, &one);
    free(p);
    if (ctl.state != SAMPLER_OFF || ctl.npatches > 0) {
        w->left++;
        w->gone = ctl.memprof_pid;
    }
    sweep_count(w, restored);
    uint32_t off = SAMPLER_OFF;
    uint64_t zero = 0;
    mem_write(sm, w->t, e->start + DATA_OFF(ctl.state), &off, sizeof off, &ignored);
    if (restored >= 0)
        mem_write(sm, w->t, e->start + DATA_OFF(ctl.npatches), &zero, sizeof zero, &ignored);
    if (ctl.watch_ino) {
        char want[64];
        pipe_link(ctl.watch_ino, want, sizeof want);
        fd_close_add(&w->fds, ctl.watch_fd, want);
        fd_close_add(&w->fds, ctl.watch_write, want);
    }
    uint64_t len = SAMPLER_CODE_SIZE + ctl.data_bytes;
    if (restored >= 0 && gated && gate_drained(sm, w->t, ctl.gate) &&
        w->fds.nunmap < UNMAP_MAX) {
        w->fds.unmap[w->fds.nunmap].start = e->start;
        w->fds.unmap[w->fds.nunmap++].len = len;
        return;
    }
    w->kept++;
    if (!sm->base && gated && ctl.gate - PAGE == sm->gate &&
        our_code(sm, w->t, e->start, sampler_image_len)) {
        sm->base = e->start;
        sm->size = sm->kept = len;
        sm->row_room = (len - SAMPLER_CODE_SIZE - sizeof(struct sampler_data)) /
                       sizeof(struct sampler_row);
    }
}

/* The region's memfd is closed in the stop that maps it: one still open
 * is a killed memprof's. */
static void add_leaked_memfds(struct fd_closes *c)
{
    char path[96];
    target_proc_dir(c->t, path, sizeof path - 8);
    strcat(path, "/fd");
    DIR *d = opendir(path);
    struct dirent *de;
    while (d && (de = readdir(d))) {
        char *end;
        long fd = strtol(de->d_name, &end, 10);
        if (!*end && end != de->d_name && fd >= 0 && fd <= INT32_MAX) {
            fd_close_add(c, (int)fd, "/memfd:" REGION_NAME " (deleted)");
            fd_close_add(c, (int)fd, "/memfd:" BODY_NAME " (deleted)");
        }
    }
    if (d)
        closedir(d);
}

/* What the sweep found, said truly: a sampler a memprof left on and died
 * with, or stand-ins this process inherited by fork. */
static void sweep_note(const struct sweep *w, char *note, size_t len)
{
    pid_t pid = target_pid(w->t);
    size_t n = 0;
    char slots[160];
    snprintf(slots, sizeof slots, "%ld call-table slot%s put back%s", w->restored,
             w->restored == 1 ? "" : "s",
             w->failed ? " (some could not be written: they pass their calls straight "
                         "through)" : "");
    if (w->left)
        n += (size_t)snprintf(note + n, len - n, "memprof's sampler was left on in process %d "
                              "by a memprof that is gone (pid %lld)", (int)pid,
                              (long long)w->gone);
    if (w->inherited && n < len)
        n += (size_t)snprintf(note + n, len - n, "%sprocess %d inherited memprof's sampler "
                              "stand-ins by fork from process %lld, which memprof was "
                              "sampling then", n ? "; " : "", (int)pid, (long long)w->parent);
    if (!n || n >= len)
        return;
    n += (size_t)snprintf(note + n, len - n, ": %s", slots);
    if (w->kept && n < len)
        n += (size_t)snprintf(note + n, len - n, "; a thread is still inside the sampler's "
                              "body, which stays mapped until the next 'prof on' or session");
    if (n < len)
        snprintf(note + n, len - n, "; its stand-ins' page (%u KiB) stays mapped, inert, "
                 "passing every call straight through", 2 * PAGE / 1024);
}

int sampler_sweep(struct sampler *sm, struct target *t, char *note, size_t notelen,
                  struct mp_error *err)
{
    struct map_list maps = {0};
    note[0] = 0;
    if (maps_read_pid(target_pid(t), &maps, err) < 0)
        return -1;
    struct sweep w = {.sm = sm, .t = t, .maps = &maps, .fds = {.t = t}, .pid = own_pid(t)};
    add_leaked_memfds(&w.fds);
    for (int pass = 0; pass < 2; pass++)        /* gates first: bodies name theirs */
        for (size_t i = 0; i < maps.n; i++) {
            const struct map_entry *m = &maps.v[i];
            if (pass == 0 && code_mapping_of(m, REGION_NAME, PAGE)) {
                if (mem_open(sm, t, err) < 0)
                    goto fail;
                sweep_gate(&w, m);
            } else if (pass == 1 && code_mapping_of(m, BODY_NAME, SAMPLER_CODE_SIZE)) {
                if (mem_open(sm, t, err) < 0)
                    goto fail;
                sweep_body(&w, m);
            }
        }
    maps_free(&maps);
    struct mp_error ignored;
    fd_close_run(&w.fds, &ignored);
    sweep_note(&w, note, notelen);
    return w.left + w.inherited;
fail:
    maps_free(&maps);
    return -1;
}
