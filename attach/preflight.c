/* preflight.c - refuses, with a reason and a remedy, every process that
 * memprof must not or cannot stop: gone, zombie, stopped, already traced,
 * not ours, 32-bit, strict seccomp, Yama.  Runs before any ptrace call. */
#include "attach/preflight.h"
#include "attach/arch/arch.h"

#include <elf.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <linux/nsfs.h>
#include <sys/auxv.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "attach/threads.h"

#define CAP_SYS_PTRACE_BIT 19
#define CAP_SYS_ADMIN_BIT 21

/* The value after "Key:" on one line, or NULL. */
static const char *field(const char *line, size_t len, const char *key)
{
    size_t klen = strlen(key);
    if (len <= klen || strncmp(line, key, klen) != 0 || line[klen] != ':')
        return NULL;
    const char *v = line + klen + 1;
    while (*v == ' ' || *v == '\t')
        v++;
    return v;
}

static void parse_ids(const char *v, unsigned *ids)
{
    for (int i = 0; i < 4; i++) {
        char *end;
        ids[i] = (unsigned)strtoul(v, &end, 10);
        v = end;
    }
}

static void parse_line(const char *line, size_t len, struct proc_status *out)
{
    const char *v;
    if ((v = field(line, len, "Name"))) {
        size_t n = len - (size_t)(v - line);
        if (n >= sizeof out->name)
            n = sizeof out->name - 1;
        memcpy(out->name, v, n);
        out->name[n] = 0;
    } else if ((v = field(line, len, "State"))) {
        out->state = *v;
    } else if ((v = field(line, len, "Tgid"))) {
        out->tgid = (pid_t)atoi(v);
    } else if ((v = field(line, len, "TracerPid"))) {
        out->tracer_pid = (pid_t)atoi(v);
    } else if ((v = field(line, len, "Uid"))) {
        parse_ids(v, out->uid);
    } else if ((v = field(line, len, "Gid"))) {
        parse_ids(v, out->gid);
    } else if ((v = field(line, len, "Seccomp"))) {
        out->seccomp = atoi(v);
    } else if ((v = field(line, len, "Seccomp_filters"))) {
        out->seccomp_filters = atoi(v);
    } else if ((v = field(line, len, "CapEff"))) {
        out->cap_eff = strtoull(v, NULL, 16);
        out->have_cap_eff = true;
    } else if ((v = field(line, len, "CapPrm"))) {
        out->cap_prm = strtoull(v, NULL, 16);
        out->have_cap_prm = true;
    } else if ((v = field(line, len, "NSpid"))) {
        /* "NSpid:\t1234\t7": outermost first, the process's own last */
        for (char *end; ; v = end) {
            long n = strtol(v, &end, 10);
            if (end == v)
                break;
            out->nspid_inner = (pid_t)n;
        }
    }
}

int preflight_parse_status(const char *text, size_t len, struct proc_status *out,
                           struct mp_error *err)
{
    memset(out, 0, sizeof *out);
    out->seccomp = -1;
    out->seccomp_filters = -1;
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        parse_line(p, n, out);
        p += n + 1;
    }
    if (!out->state || !out->tgid)
        return mp_error_set(err, "not a /proc/PID/status text (no State or Tgid line)");
    return 0;
}

static int check_state(pid_t pid, const struct proc_status *st, struct mp_error *err)
{
    switch (st->state) {
    case 'Z':
    case 'X':
        return mp_error_set(err, "process %d (%s) has exited and is a zombie "
                            "waiting for its parent to reap it: nothing to attach to",
                            pid, st->name);
    case 'T':
        return mp_error_set(err, "process %d (%s) is stopped (state T): memprof "
                            "will not run code in a stopped process; resume it "
                            "with `kill -CONT %d` and retry", pid, st->name, pid);
    case 't':
        return mp_error_set(err, "process %d (%s) is stopped by a debugger "
                            "(state t): detach the debugger and retry",
                            pid, st->name);
    }
    return 0;
}

/* Is some thread of pid free of any tracer?  A tracer (strace -p TID)
 * may hold only some threads: memprof then borrows another. */
static bool some_thread_untraced(pid_t pid)
{
    char dir[64];
    snprintf(dir, sizeof dir, "/proc/%d/task", pid);
    DIR *d = opendir(dir);
    if (!d)
        return false;
    bool found = false;
    struct dirent *e;
    while (!found && (e = readdir(d))) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        char path[96];
        struct proc_status ts;
        snprintf(path, sizeof path, "/proc/%d/task/%.20s/status", pid, e->d_name);
        found = preflight_read_status(path, &ts) == 0 && ts.tracer_pid == 0 &&
                ts.state != 'Z' && ts.state != 'X';
    }
    closedir(d);
    return found;
}

static int check_tracer(pid_t pid, const struct proc_status *st, struct mp_error *err)
{
    if (st->tgid != pid)
        return mp_error_set(err, "%d is a thread of process %d, not a process: "
                            "use -p %d", pid, st->tgid, st->tgid);
    if (st->tracer_pid != 0 && strcmp(st->tracer_comm, "memprof") == 0)
        return mp_error_set(err, "process %d (%s) is already traced by memprof "
                            "(pid %d), which holds one of its threads for a call: "
                            "wait for that session to end or end it", pid, st->name,
                            st->tracer_pid);
    if (st->tracer_pid != 0 && !some_thread_untraced(pid))
        return mp_error_set(err, "process %d (%s) is already traced by process %d "
                            "(%s): a thread can have only one tracer; detach it and "
                            "retry", pid, st->name, st->tracer_pid,
                            st->tracer_comm[0] ? st->tracer_comm : "a debugger or strace");
    return 0;
}

static bool ids_differ(const unsigned *ids)
{
    return ids[0] != ids[1] || ids[0] != ids[2];
}

char *preflight_root_lacks(const char *cap, char *buf, size_t len)
{
    snprintf(buf, len, "memprof runs as root but without CAP_%s (a container or a "
             "dropped capability set): give it CAP_%s (podman/docker --cap-add %s; "
             "Kubernetes securityContext.capabilities.add)", cap, cap, cap);
    return buf;
}

/* What to do about a missing CAP_SYS_PTRACE: a memprof that runs as root
 * without it was given a reduced capability set (a container, a
 * DaemonSet, capsh), and "run as root" would not be true advice. */
static const char *ptrace_remedy(const struct tracer_identity *me, char *buf, size_t len)
{
    return me->euid == 0 ? preflight_root_lacks("SYS_PTRACE", buf, len) : "run memprof as root";
}

/* The kernel's rule (ptrace_may_access): without CAP_SYS_PTRACE in the
 * target's user namespace, the real, effective and saved ids must all be
 * the tracer's, the process dumpable, and its permitted capabilities a
 * subset of the tracer's. */
static int check_permission(pid_t pid, const struct proc_status *st,
                            const struct tracer_identity *me, struct mp_error *err)
{
    char fix[256];
    if (me->cap_sys_ptrace || me->owns_target_userns)
        return 0;
    if (ids_differ(st->uid) || ids_differ(st->gid))
        return mp_error_set(err, "not permitted to trace process %d (%s): it runs a "
                            "setuid/setgid program, so its real and effective ids "
                            "differ (uid real %u effective %u saved %u, gid real %u "
                            "effective %u saved %u) and no single unprivileged user "
                            "may trace it; this needs CAP_SYS_PTRACE: %s",
                            pid, st->name, st->uid[0], st->uid[1],
                            st->uid[2], st->gid[0], st->gid[1], st->gid[2],
                            ptrace_remedy(me, fix, sizeof fix));
    if (st->uid[0] != me->euid || st->gid[0] != me->egid)
        return mp_error_set(err, "not permitted to trace process %d (%s): it "
                            "runs as uid %u gid %u and memprof as uid %u gid %u "
                            "without CAP_SYS_PTRACE: run memprof as the same "
                            "user (sudo -u) or %s", pid, st->name, st->uid[1],
                            st->gid[1], me->euid, me->egid,
                            me->euid == 0 ? "give it CAP_SYS_PTRACE (a container or "
                                            "a dropped capability set took it)"
                                          : "as root");
    if (st->non_dumpable)
        return mp_error_set(err, "not permitted to trace process %d (%s), though it "
                            "runs as memprof's own user: it is non-dumpable "
                            "(prctl PR_SET_DUMPABLE 0, or it changed credentials), "
                            "and tracing it needs CAP_SYS_PTRACE: %s", pid, st->name,
                            ptrace_remedy(me, fix, sizeof fix));
    uint64_t caps = st->have_cap_prm ? st->cap_prm : st->have_cap_eff ? st->cap_eff : 0;
    if (caps & ~me->cap_prm)
        return mp_error_set(err, "not permitted to trace process %d (%s), though it "
                            "runs as memprof's own user: it holds capabilities "
                            "memprof lacks (CapPrm %llx), and tracing it needs "
                            "CAP_SYS_PTRACE: %s", pid, st->name,
                            (unsigned long long)caps, ptrace_remedy(me, fix, sizeof fix));
    return 0;
}

/* Suspending a seccomp filter (PTRACE_O_SUSPEND_SECCOMP, see remote_call.c)
 * needs CAP_SYS_ADMIN, and a tracer that is not itself filtered. */
static int check_seccomp(pid_t pid, const struct proc_status *st,
                         const struct tracer_identity *me, struct mp_error *err)
{
    char fix[256];
    if (st->seccomp == 1)
        return mp_error_set(err, "process %d (%s) runs in strict seccomp mode: "
                            "the kernel would kill it for any system call mallctl "
                            "makes, so memprof will not call into it", pid, st->name);
    if (st->seccomp != 2 || (me->cap_sys_admin && me->seccomp == 0))
        return 0;
    /* The kernel (ptrace_setoptions) wants both: CAP_SYS_ADMIN and a
     * tracer under no seccomp filter of its own.  A container's default
     * profile filters memprof itself; say every part that is missing. */
    const char *why = me->seccomp != 0 && !me->cap_sys_admin
        ? "memprof itself runs under a seccomp filter and without CAP_SYS_ADMIN, "
          "and the kernel lets only an unfiltered tracer with CAP_SYS_ADMIN suspend "
          "a filter: run memprof unfiltered and with CAP_SYS_ADMIN (podman/docker "
          "--security-opt seccomp=unconfined --cap-add SYS_ADMIN; Kubernetes "
          "securityContext seccompProfile Unconfined, capabilities add SYS_ADMIN)"
        : me->seccomp != 0
        ? "memprof itself runs under seccomp, and the kernel lets only an "
          "unfiltered tracer suspend a filter: run memprof outside the sandbox "
          "that filters it (podman/docker --security-opt seccomp=unconfined; "
          "Kubernetes securityContext seccompProfile Unconfined)"
        : me->euid == 0
        ? preflight_root_lacks("SYS_ADMIN", fix, sizeof fix)
        : "that needs CAP_SYS_ADMIN: run memprof as root";
    return mp_error_set(err, "process %d (%s) runs under a seccomp filter, which could "
                        "kill it for the system call memprof skips after each call; "
                        "memprof suspends the filter while it holds a thread, and %s",
                        pid, st->name, why);
}

static int check_yama(pid_t pid, const struct tracer_identity *me, int scope,
                      struct mp_error *err)
{
    char fix[256];
    if (scope <= 0 || (scope <= 2 && me->cap_sys_ptrace))
        return 0;
    if (scope == 1)
        return mp_error_set(err, "Yama ptrace_scope is 1: only a parent may trace "
                            "process %d without CAP_SYS_PTRACE: %s, or `sysctl "
                            "kernel.yama.ptrace_scope=0`", pid, ptrace_remedy(me, fix, sizeof fix));
    if (scope == 2)
        return mp_error_set(err, "Yama ptrace_scope is 2: tracing process %d needs "
                            "CAP_SYS_PTRACE: %s", pid, ptrace_remedy(me, fix, sizeof fix));
    return mp_error_set(err, "Yama ptrace_scope is %d: ptrace is disabled on this "
                        "machine until reboot, so memprof cannot attach to "
                        "process %d", scope, pid);
}

int preflight_check_status(pid_t pid, const struct proc_status *st,
                           const struct tracer_identity *me, int yama_scope,
                           struct mp_error *err)
{
    if (check_state(pid, st, err) < 0 || check_tracer(pid, st, err) < 0)
        return -1;
    if (check_permission(pid, st, me, err) < 0 || check_yama(pid, me, yama_scope, err) < 0)
        return mp_error_mark(err, MP_ERROR_DENIED);
    return check_seccomp(pid, st, me, err);
}

int preflight_check_elf_header(pid_t pid, const unsigned char *hdr, size_t len,
                               struct mp_error *err)
{
    if (len < EI_NIDENT || memcmp(hdr, ELFMAG, SELFMAG) != 0)
        return mp_error_set(err, "process %d: its executable is not an ELF file", pid);
    if (hdr[EI_CLASS] == ELFCLASS32)
        return mp_error_set(err, "process %d is a 32-bit program: memprof handles "
                            "64-bit " ARCH_NAME " processes only", pid);
    if (len >= sizeof(Elf64_Ehdr)) {
        const Elf64_Ehdr *eh = (const Elf64_Ehdr *)hdr;
        if (eh->e_machine != ARCH_ELF_MACHINE)
            return mp_error_set(err, "process %d is not an " ARCH_NAME " program (ELF "
                                "machine %u): memprof cannot call into it", pid,
                                eh->e_machine);
    }
    return 0;
}

static int read_small_file(const char *path, char *buf, size_t cap, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, cap - 1);
    int saved = errno;
    close(fd);
    if (n < 0) {
        errno = saved;
        return -1;
    }
    buf[n] = 0;
    *len = (size_t)n;
    return 0;
}

int preflight_read_status(const char *path, struct proc_status *out)
{
    char buf[8192];
    size_t len;
    struct mp_error ignored;
    if (read_small_file(path, buf, sizeof buf, &len) < 0)
        return -1;
    if (preflight_parse_status(buf, len, out, &ignored) < 0) {
        errno = EINVAL;
        return -1;
    }
    return 0;
}

void preflight_identity(struct tracer_identity *me)
{
    memset(me, 0, sizeof *me);
    me->euid = geteuid();
    me->egid = getegid();
    char buf[4096];
    size_t len;
    struct proc_status self;
    struct mp_error ignored;
    if (read_small_file("/proc/self/status", buf, sizeof buf, &len) == 0 &&
        preflight_parse_status(buf, len, &self, &ignored) == 0) {
        me->cap_sys_ptrace = (self.cap_eff >> CAP_SYS_PTRACE_BIT) & 1;
        me->cap_sys_admin = (self.cap_eff >> CAP_SYS_ADMIN_BIT) & 1;
        me->cap_prm = self.cap_prm;
        me->seccomp = self.seccomp > 0 ? self.seccomp : 0;
    }
}

/* The target's user namespace is a descendant of memprof's, created by
 * memprof's effective user (`unshare -U` by the same user): the kernel
 * gives that user every capability inside it. */
static bool owns_userns(const char *proc_dir)
{
    char path[96];
    snprintf(path, sizeof path, "%s/ns/user", proc_dir);
    struct stat mine, theirs;
    if (stat("/proc/self/ns/user", &mine) < 0 || stat(path, &theirs) < 0 ||
        mine.st_ino == theirs.st_ino)
        return false;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    uid_t owner;
    bool owned = ioctl(fd, NS_GET_OWNER_UID, &owner) == 0 && owner == geteuid();
    /* ...and created from memprof's namespace or one of its descendants. */
    for (int depth = 0; owned && depth < 32; depth++) {
        int parent = ioctl(fd, NS_GET_PARENT);
        close(fd);
        fd = parent;
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0) {
            owned = false;
            break;
        }
        if (st.st_ino == mine.st_ino && st.st_dev == mine.st_dev)
            break;
    }
    if (fd >= 0)
        close(fd);
    return owned;
}

static int yama_scope(void)
{
    char buf[32];
    size_t len;
    if (read_small_file("/proc/sys/kernel/yama/ptrace_scope", buf, sizeof buf, &len) < 0)
        return -1;
    return atoi(buf);
}

static int check_exe(pid_t pid, const char *proc_dir, struct mp_error *err)
{
    char path[96];
    snprintf(path, sizeof path, "%s/exe", proc_dir);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 && errno == EACCES && geteuid() == 0) {
        char fix[256];
        return mp_error_set(err, "cannot open the executable of process %d (%s): %s: "
                            "only its owner may read it, and %s", pid, path,
                            strerror(errno), preflight_root_lacks("DAC_OVERRIDE", fix, sizeof fix));
    }
    if (fd < 0)
        return mp_error_set(err, "cannot open the executable of process %d (%s): %s",
                            pid, path, strerror(errno));
    unsigned char hdr[sizeof(Elf64_Ehdr)];
    ssize_t n = pread(fd, hdr, sizeof hdr, 0);
    close(fd);
    return preflight_check_elf_header(pid, hdr, n > 0 ? (size_t)n : 0, err);
}

int preflight_check_proc_view(pid_t self_pid, const char *proc_self, bool proc_mounted,
                              struct mp_error *err)
{
    if (!proc_self && proc_mounted)
        return mp_error_set(err, "the /proc mounted here belongs to a pid namespace "
                            "memprof is not in (/proc/self does not resolve), so its "
                            "pids name other processes than memprof's own: memprof "
                            "was probably started with `nsenter -m` without `-p`; "
                            "enter the pid namespace too (nsenter -m -p), or run "
                            "memprof outside the mount namespace");
    if (!proc_self)
        return mp_error_set(err, "/proc is not mounted: memprof reads processes "
                            "through /proc; mount it");
    char mine[32];
    snprintf(mine, sizeof mine, "%d", self_pid);
    if (strcmp(proc_self, mine) != 0)
        return mp_error_set(err, "the /proc mounted here belongs to another pid "
                            "namespace (memprof is pid %d, but /proc/self is %s), so "
                            "its pids name other processes than memprof's own: "
                            "memprof was probably started with `nsenter -m` without "
                            "`-p`; enter the pid namespace too (nsenter -m -p), or "
                            "run memprof outside the mount namespace",
                            self_pid, proc_self);
    return 0;
}

static int check_proc_view(struct mp_error *err)
{
    char link[32];
    ssize_t n = readlink("/proc/self", link, sizeof link - 1);
    if (n >= 0)
        link[n] = 0;
    struct statfs fs;
    bool mounted = statfs("/proc", &fs) == 0 && fs.f_type == PROC_SUPER_MAGIC;
    return preflight_check_proc_view(getpid(), n >= 0 ? link : NULL, mounted, err);
}

#define ZOMBIE_TRIES 10
#define ZOMBIE_RETRY_NS 2000000

/* The status of a live thread, when the main thread has exited but others
 * run on: they hold the state and tracer that matter.  Tgid stays pid.
 * A main thread also shows as a zombie while another thread exec's (it
 * was killed for the exec), until the exec'ing thread takes its pid and
 * may be missed under either tid meanwhile: the status is looked at again
 * for a few milliseconds before the process is called a zombie. */
static void live_thread_status(pid_t pid, struct proc_status *st)
{
    for (int i = 0; i < ZOMBIE_TRIES && (st->state == 'Z' || st->state == 'X'); i++) {
        if (i > 0) {
            struct timespec ts = { 0, ZOMBIE_RETRY_NS };
            nanosleep(&ts, NULL);
        }
        pid_t tid = threads_live_tid(pid);
        char path[96];
        if (tid == pid)
            snprintf(path, sizeof path, "/proc/%d/status", pid);
        else
            snprintf(path, sizeof path, "/proc/%d/task/%d/status", pid, tid);
        struct proc_status live;
        if (tid > 0 && preflight_read_status(path, &live) == 0 && live.state != 'Z' &&
            live.state != 'X')
            *st = live;
    }
}

static void tracer_comm(pid_t tracer, char *buf, size_t len)
{
    char path[64], comm[64];
    size_t n;
    buf[0] = 0;
    snprintf(path, sizeof path, "/proc/%d/comm", tracer);
    if (tracer > 0 && read_small_file(path, comm, sizeof comm, &n) == 0) {
        comm[strcspn(comm, "\n")] = 0;
        snprintf(buf, len, "%.15s", comm);
    }
}

/* A non-dumpable process's /proc files (not its directories) belong to
 * root (of its user namespace), whatever its own ids. */
static bool non_dumpable(const char *proc_dir, const struct proc_status *st)
{
    char path[96];
    struct stat sb;
    snprintf(path, sizeof path, "%s/status", proc_dir);
    return stat(path, &sb) == 0 && sb.st_uid != st->uid[1];
}

int preflight_run(pid_t pid, struct mp_error *err)
{
    if (pid <= 0)
        return mp_error_set(err, "%d is not a process id", pid);
    if (check_proc_view(err) < 0)
        return -1;
    char path[64], buf[8192];
    size_t len;
    snprintf(path, sizeof path, "/proc/%d/status", pid);
    if (read_small_file(path, buf, sizeof buf, &len) < 0) {
        if (errno == ENOENT || errno == ESRCH) {
            mp_error_set(err, "no process %d: it has exited or never existed (check "
                         "the pid with `ps -p %d`)", pid, pid);
            return mp_error_mark(err, MP_ERROR_NO_PROCESS);
        }
        return mp_error_set(err, "cannot read %s: %s", path, strerror(errno));
    }
    struct proc_status st;
    if (preflight_parse_status(buf, len, &st, err) < 0)
        return mp_error_prefix(err, "%s", path);
    char dir[64];
    threads_proc_dir(pid, dir, sizeof dir);
    live_thread_status(pid, &st);
    tracer_comm(st.tracer_pid, st.tracer_comm, sizeof st.tracer_comm);
    st.non_dumpable = non_dumpable(dir, &st);
    struct tracer_identity me;
    preflight_identity(&me);
    me.owns_target_userns = owns_userns(dir);
    if (preflight_check_status(pid, &st, &me, yama_scope(), err) < 0)
        return -1;
    return check_exe(pid, dir, err);
}

void preflight_thread_tracer(pid_t pid, pid_t tid, char *buf, size_t len)
{
    char path[96], comm[16];
    struct proc_status st;
    buf[0] = 0;
    snprintf(path, sizeof path, "/proc/%d/task/%d/status", pid, tid);
    if (preflight_read_status(path, &st) < 0 || st.tracer_pid == 0)
        return;
    tracer_comm(st.tracer_pid, comm, sizeof comm);
    if (strcmp(comm, "memprof") == 0)
        snprintf(buf, len, "memprof (pid %d)", st.tracer_pid);
    else
        snprintf(buf, len, "process %d (%s)", st.tracer_pid, comm[0] ? comm : "?");
}

bool preflight_secure_exec(pid_t pid)
{
    char path[96];
    threads_proc_dir(pid, path, sizeof path - 8);
    strcat(path, "/auxv");
    uint64_t aux[2 * 64];
    size_t len;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t n = read(fd, aux, sizeof aux);
    close(fd);
    len = n > 0 ? (size_t)n / sizeof aux[0] : 0;
    for (size_t i = 0; i + 1 < len && aux[i] != AT_NULL; i += 2)
        if (aux[i] == AT_SECURE)
            return aux[i + 1] != 0;
    return false;
}
