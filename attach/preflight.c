/* preflight.c - refuses, with a reason and a remedy, every process that
 * memprof must not or cannot stop: gone, zombie, stopped, already traced,
 * not ours, 32-bit, strict seccomp, Yama.  Runs before any ptrace call. */
#include "attach/preflight.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CAP_SYS_PTRACE_BIT 19

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
    } else if ((v = field(line, len, "CapEff"))) {
        out->cap_eff = strtoull(v, NULL, 16);
        out->have_cap_eff = true;
    }
}

int preflight_parse_status(const char *text, size_t len, struct proc_status *out,
                           struct mp_error *err)
{
    memset(out, 0, sizeof *out);
    out->seccomp = -1;
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

static int check_tracer(pid_t pid, const struct proc_status *st, struct mp_error *err)
{
    if (st->tgid != pid)
        return mp_error_set(err, "%d is a thread of process %d, not a process: "
                            "use -p %d", pid, st->tgid, st->tgid);
    if (st->tracer_pid != 0)
        return mp_error_set(err, "process %d (%s) is already traced by process %d "
                            "(a debugger, strace or another memprof): a thread "
                            "can have only one tracer; detach it and retry",
                            pid, st->name, st->tracer_pid);
    return 0;
}

static int check_permission(pid_t pid, const struct proc_status *st,
                            const struct tracer_identity *me, struct mp_error *err)
{
    if (me->cap_sys_ptrace)
        return 0;
    for (int i = 0; i < 4; i++) {
        if (st->uid[i] != me->euid || st->gid[i] != me->egid)
            return mp_error_set(err, "not permitted to trace process %d (%s): it "
                                "runs as uid %u gid %u and memprof as uid %u gid %u "
                                "without CAP_SYS_PTRACE: run memprof as the same "
                                "user (sudo -u) or as root",
                                pid, st->name, st->uid[1], st->gid[1],
                                me->euid, me->egid);
    }
    if (st->have_cap_eff && st->cap_eff != 0)
        return mp_error_set(err, "not permitted to trace process %d (%s): it "
                            "holds capabilities (CapEff %llx) memprof lacks: run "
                            "memprof as root", pid, st->name,
                            (unsigned long long)st->cap_eff);
    return 0;
}

static int check_yama(pid_t pid, const struct tracer_identity *me, int scope,
                      struct mp_error *err)
{
    if (scope <= 0 || (scope <= 2 && me->cap_sys_ptrace))
        return 0;
    if (scope == 1)
        return mp_error_set(err, "Yama ptrace_scope is 1: only a parent may trace "
                            "process %d; run memprof as root (CAP_SYS_PTRACE) or "
                            "`sysctl kernel.yama.ptrace_scope=0`", pid);
    if (scope == 2)
        return mp_error_set(err, "Yama ptrace_scope is 2: tracing process %d needs "
                            "CAP_SYS_PTRACE; run memprof as root", pid);
    return mp_error_set(err, "Yama ptrace_scope is %d: ptrace is disabled on this "
                        "machine until reboot, so memprof cannot attach to "
                        "process %d", scope, pid);
}

int preflight_check_status(pid_t pid, const struct proc_status *st,
                           const struct tracer_identity *me, int yama_scope,
                           struct mp_error *err)
{
    if (check_state(pid, st, err) < 0 || check_tracer(pid, st, err) < 0 ||
        check_permission(pid, st, me, err) < 0 || check_yama(pid, me, yama_scope, err) < 0)
        return -1;
    if (st->seccomp == 1)
        return mp_error_set(err, "process %d (%s) runs in strict seccomp mode: "
                            "the kernel would kill it for any system call mallctl "
                            "makes, so memprof will not call into it", pid, st->name);
    return 0;
}

int preflight_check_elf_header(pid_t pid, const unsigned char *hdr, size_t len,
                               struct mp_error *err)
{
    if (len < EI_NIDENT || memcmp(hdr, ELFMAG, SELFMAG) != 0)
        return mp_error_set(err, "process %d: its executable is not an ELF file", pid);
    if (hdr[EI_CLASS] == ELFCLASS32)
        return mp_error_set(err, "process %d is a 32-bit program: memprof handles "
                            "64-bit x86-64 processes only", pid);
    if (len >= sizeof(Elf64_Ehdr)) {
        const Elf64_Ehdr *eh = (const Elf64_Ehdr *)hdr;
        if (eh->e_machine != EM_X86_64)
            return mp_error_set(err, "process %d is not an x86-64 program (ELF "
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

static void my_identity(struct tracer_identity *me)
{
    me->euid = geteuid();
    me->egid = getegid();
    me->cap_sys_ptrace = false;
    char buf[4096];
    size_t len;
    struct proc_status self;
    struct mp_error ignored;
    if (read_small_file("/proc/self/status", buf, sizeof buf, &len) == 0 &&
        preflight_parse_status(buf, len, &self, &ignored) == 0 && self.have_cap_eff)
        me->cap_sys_ptrace = (self.cap_eff >> CAP_SYS_PTRACE_BIT) & 1;
}

static int yama_scope(void)
{
    char buf[32];
    size_t len;
    if (read_small_file("/proc/sys/kernel/yama/ptrace_scope", buf, sizeof buf, &len) < 0)
        return -1;
    return atoi(buf);
}

static int check_exe(pid_t pid, struct mp_error *err)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/exe", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return mp_error_set(err, "cannot open the executable of process %d (%s): %s",
                            pid, path, strerror(errno));
    unsigned char hdr[sizeof(Elf64_Ehdr)];
    ssize_t n = pread(fd, hdr, sizeof hdr, 0);
    close(fd);
    return preflight_check_elf_header(pid, hdr, n > 0 ? (size_t)n : 0, err);
}

int preflight_run(pid_t pid, struct mp_error *err)
{
    if (pid <= 0)
        return mp_error_set(err, "%d is not a process id", pid);
    char path[64], buf[8192];
    size_t len;
    snprintf(path, sizeof path, "/proc/%d/status", pid);
    if (read_small_file(path, buf, sizeof buf, &len) < 0) {
        if (errno == ENOENT || errno == ESRCH)
            return mp_error_set(err, "no process %d: it has exited or never "
                                "existed (check the pid with `ps -p %d`)", pid, pid);
        return mp_error_set(err, "cannot read %s: %s", path, strerror(errno));
    }
    struct proc_status st;
    if (preflight_parse_status(buf, len, &st, err) < 0)
        return mp_error_prefix(err, "%s", path);
    struct tracer_identity me;
    my_identity(&me);
    if (preflight_check_status(pid, &st, &me, yama_scope(), err) < 0)
        return -1;
    return check_exe(pid, err);
}
