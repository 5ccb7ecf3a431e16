/* memfd.c - the process's own C library functions that memprof calls,
 * and files that carry output out of the process with nothing named in its
 * filesystem: in one stop of one thread the process creates an anonymous
 * memfd, writes into it (through /proc/thread-self/fd/N: the allocator's
 * dump, a FILE), memprof opens the same file through
 * /proc/PID/task/TID/fd/N (a magic link: no name in the process's
 * filesystem is looked up) and the process closes its descriptor, all
 * before the thread runs again; memprof reads the bytes afterwards from its
 * own descriptor.  A memprof killed inside that stop leaves at most one
 * open "memfd:memprof-dump-PID" in the process: the first stop of a later
 * session closes those whose memprof is dead (memfd_sweep_*). */
#include "attach/target_internal.h"
#include "attach/threads.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef MFD_CLOEXEC
#define MFD_CLOEXEC 0x0001U
#endif
#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL 0x0008U
#endif

#define MEMFD_PREFIX "memprof-dump-"   /* the name every memprof gives its memfds */

/* ---- the process's own functions ------------------------------------ */

static bool is_libc(const struct mapped_object *o)
{
    const char *slash = strrchr(o->path, '/');
    const char *base = slash ? slash + 1 : o->path;
    return strncmp(base, "libc.so", 7) == 0 || strncmp(base, "libc-", 5) == 0 ||
           strncmp(base, "ld-musl-", 8) == 0 || strncmp(base, "libc.musl-", 10) == 0;
}

/* The C library's functions, else the executable's (a static program). */
const struct target_libc *target_libc(struct target *t)
{
    struct target_libc *c = &t->libc;
    if (c->looked)
        return c;
    c->looked = true;
    for (int pass = 0; pass < 2 && !(c->close || c->syscall); pass++) {
        for (size_t i = 0; i < t->objs.n; i++) {
            const struct mapped_object *o = &t->objs.v[i];
            if (pass == 0 ? !is_libc(o) : !o->is_exe)
                continue;
            c->memfd_create = mapped_object_function_address(o, "memfd_create");
            c->close = mapped_object_function_address(o, "close");
            c->syscall = mapped_object_function_address(o, "syscall");
            c->mmap = mapped_object_function_address(o, "mmap");
            c->mprotect = mapped_object_function_address(o, "mprotect");
            c->munmap = mapped_object_function_address(o, "munmap");
            if (c->close || c->syscall)
                break;
        }
    }
    return c;
}

/* fn(args) returning an int (a descriptor, 0 or -1). */
static int call_int(struct remote_stop *s, uint64_t fn, const uint64_t *args, size_t n,
                    int *ret, struct mp_error *err)
{
    uint64_t r;
    if (remote_stop_call_plain(s, fn, args, n, &r, err) < 0)
        return -1;
    *ret = (int)(int32_t)(uint32_t)r;
    return 0;
}

static int remote_close(struct remote_stop *s, const struct target_libc *c, int fd,
                        int *ret, struct mp_error *err)
{
    uint64_t args[2] = { SYS_close, (uint64_t)fd };
    if (c->close)
        return call_int(s, c->close, args + 1, 1, ret, err);
    return call_int(s, c->syscall, args, 2, ret, err);
}

/* name lives at name_addr in the process. */
static int remote_memfd(struct remote_stop *s, const struct target_libc *c,
                        uint64_t name_addr, unsigned flags, int *ret,
                        struct mp_error *err)
{
    uint64_t args[3] = { SYS_memfd_create, name_addr, flags };
    if (c->memfd_create)
        return call_int(s, c->memfd_create, args + 1, 2, ret, err);
    return call_int(s, c->syscall, args, 3, ret, err);
}

/* MFD_NOEXEC_SEAL (Linux 6.3) keeps newer kernels from warning about an
 * executable memfd; older ones refuse the flag.  The process runs on
 * memprof's kernel: ask it once here. */
static unsigned memfd_flags(void)
{
    static int noexec = -1;
    if (noexec < 0) {
        int fd = (int)syscall(SYS_memfd_create, "memprof-probe", MFD_CLOEXEC | MFD_NOEXEC_SEAL);
        noexec = fd >= 0;
        if (fd >= 0)
            close(fd);
    }
    return MFD_CLOEXEC | (noexec ? MFD_NOEXEC_SEAL : 0);
}

/* ---- leftovers of memprofs that died ------------------------------------ */

bool memprof_alive(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno != ENOENT && errno != ESRCH;  /* cannot tell: alive */
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return false;
    buf[n] = 0;
    const char *p = strrchr(buf, ')');
    return !p || !p[1] || (p[2] != 'Z' && p[2] != 'X');
}

/* The memprof pid a memfd link target names ("/memfd:memprof-dump-PID
 * (deleted)"), or 0 when it is not one of memprof's. */
static pid_t memfd_owner(const char *link)
{
    static const char head[] = "/memfd:" MEMFD_PREFIX, tail[] = " (deleted)";
    if (strncmp(link, head, sizeof head - 1) != 0)
        return 0;
    char *end;
    long pid = strtol(link + sizeof head - 1, &end, 10);
    if (end == link + sizeof head - 1 || strcmp(end, tail) != 0 || pid <= 0 ||
        pid > 0x3fffffff)
        return 0;
    return (pid_t)pid;
}

static pid_t fd_memfd_owner(const char *fd_path)
{
    char link[256];
    ssize_t n = readlink(fd_path, link, sizeof link - 1);
    if (n <= 0)
        return 0;
    link[n] = 0;
    return memfd_owner(link);
}

static bool leftover(pid_t owner)
{
    return owner && owner != getpid() && !memprof_alive(owner);
}

size_t memfd_sweep_list(struct target *t, int *fds, size_t cap)
{
    char path[96];
    threads_proc_dir(t->pid, path, sizeof path - 4);    /* a live thread's */
    strcat(path, "/fd");
    DIR *d = opendir(path);
    size_t n = 0;
    struct dirent *de;
    while (d && n < cap && (de = readdir(d))) {
        char *end;
        long fd = strtol(de->d_name, &end, 10);
        if (*end || end == de->d_name || fd < 0 || fd > 0x7fffffff)
            continue;
        char fd_path[96];
        snprintf(fd_path, sizeof fd_path, "%s/%ld", path, fd);
        if (leftover(fd_memfd_owner(fd_path)))
            fds[n++] = (int)fd;
    }
    if (d)
        closedir(d);
    return n;
}

/* Each descriptor is checked again inside the stop, against the stopped
 * thread's own table, just before it is closed: only a memfd that a dead
 * memprof named is ever closed. */
void memfd_sweep_in_stop(struct target *t, struct remote_stop *s, const int *fds,
                        size_t n)
{
    const struct target_libc *c = target_libc(t);
    if (!c->close && !c->syscall)
        return;
    for (size_t i = 0; i < n && !s->gone; i++) {
        char fd_path[96];
        snprintf(fd_path, sizeof fd_path, "/proc/%d/task/%d/fd/%d", t->pid, s->tid, fds[i]);
        int ret;
        struct mp_error ignored;
        if (leftover(fd_memfd_owner(fd_path)) &&
            remote_close(s, c, fds[i], &ret, &ignored) < 0)
            return;
    }
}

/* ---- memfds a stop creates ---------------------------------------------- */

static bool memfd_disabled(void)
{
    const char *v = getenv("MEMPROF_TEST_NO_MEMFD");
    return v && *v && strcmp(v, "0") != 0;
}

bool target_memfd_possible(struct target *t, char *why, size_t whylen)
{
    const struct target_libc *c = target_libc(t);
    if (memfd_disabled()) {
        snprintf(why, whylen, "MEMPROF_TEST_NO_MEMFD is set");
        return false;
    }
    if (!(c->memfd_create && c->close) && !c->syscall) {
        snprintf(why, whylen, "process %d has neither memfd_create() and close() nor "
                 "syscall() in its C library or executable", t->pid);
        return false;
    }
    return true;
}

int target_memfd_create(struct remote_stop *s, struct target *t, int *fd, char *why,
                        size_t whylen, struct mp_error *err)
{
    char name[64];
    snprintf(name, sizeof name, MEMFD_PREFIX "%d", (int)getpid());
    uint64_t base, sp;
    *fd = -1;
    if (remote_stop_scratch(s, sizeof name, &base, &sp, err) < 0 ||
        remote_stop_write(s, base, name, sizeof name, err) < 0 ||
        remote_memfd(s, target_libc(t), base, memfd_flags(), fd, err) < 0)
        return -1;
    if (*fd < 0) {
        snprintf(why, whylen, "memfd_create() failed in process %d", s->ctx->pid);
        return 0;
    }
    char fd_path[96];
    snprintf(fd_path, sizeof fd_path, "/proc/%d/task/%d/fd/%d", s->ctx->pid, s->tid, *fd);
    if (fd_memfd_owner(fd_path) != getpid()) {
        /* Not the file asked for (a memfd_create of the program's own?):
         * not memprof's to write into or to close. */
        snprintf(why, whylen, "memfd_create() in process %d returned descriptor %d, "
                 "which is not the memfd memprof asked for", s->ctx->pid, *fd);
        *fd = -1;
    }
    return 0;
}

int target_memfd_open(struct remote_stop *s, int fd, char *why, size_t whylen)
{
    char fd_path[96];
    snprintf(fd_path, sizeof fd_path, "/proc/%d/task/%d/fd/%d", s->ctx->pid, s->tid, fd);
    int local = open(fd_path, O_RDONLY | O_CLOEXEC);
    if (local < 0)
        snprintf(why, whylen, "cannot open %s: %s", fd_path, strerror(errno));
    return local;
}

int target_memfd_close(struct remote_stop *s, struct target *t, int fd, struct mp_error *err)
{
    int closed;
    return remote_close(s, target_libc(t), fd, &closed, err);
}
