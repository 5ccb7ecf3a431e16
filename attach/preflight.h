/* preflight.h - checks made before memprof stops anything in a process:
 * is it there, stopped, already traced, ours to trace, 64-bit, usable
 * under its seccomp mode and Yama's ptrace_scope.  The parsing and the
 * decisions are pure functions so unit tests can feed them text. */
#ifndef MEMPROF_PREFLIGHT_H
#define MEMPROF_PREFLIGHT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/base/error.h"

/* What /proc/PID/status says that matters for attaching. */
struct proc_status {
    char name[64];
    char state;              /* R S D T t Z X ... ; 0 when missing */
    pid_t tgid, tracer_pid;
    uid_t uid[4];            /* real, effective, saved, fs */
    gid_t gid[4];
    int seccomp;             /* 0 none, 1 strict, 2 filter; -1 unknown */
    int seccomp_filters;     /* filters stacked (Linux 5.9+); -1 unknown */
    uint64_t cap_eff, cap_prm;
    bool have_cap_eff, have_cap_prm;
    pid_t nspid_inner;       /* last NSpid number: the pid in its own namespace */
    /* Not in the status text: preflight_run fills these from elsewhere. */
    char tracer_comm[16];    /* comm of tracer_pid, "" when unknown */
    bool non_dumpable;       /* its /proc entries belong to root, not to it */
};

/* Parse status text.  Returns 0, or -1 when it is not status text. */
int preflight_parse_status(const char *text, size_t len, struct proc_status *out,
                           struct mp_error *err);

/* Who memprof is: its credentials and capabilities, as they count for
 * one target. */
struct tracer_identity {
    uid_t euid;
    gid_t egid;
    bool cap_sys_ptrace;
    bool owns_target_userns; /* the target lives in a user namespace memprof's
                              * user created (unshare -U): memprof holds every
                              * capability there, as the kernel counts them */
    uint64_t cap_prm;        /* memprof's permitted capabilities */
    bool cap_sys_admin;      /* needed to suspend a seccomp filter */
    int seccomp;             /* memprof's own seccomp mode (0: none) */
};

/* memprof's own identity, from /proc/self/status (owns_target_userns is
 * per target: left false). */
void preflight_identity(struct tracer_identity *me);

/* The advice for memprof running as root without capability CAP_<cap>
 * (a container, a DaemonSet, a dropped capability set), written into buf:
 * which one, and how to give it.  Returns buf. */
char *preflight_root_lacks(const char *cap, char *buf, size_t len);

/* Read and parse a status file (/proc/PID/status, /proc/PID/task/TID/
 * status).  Returns 0, or -1 with errno set. */
int preflight_read_status(const char *path, struct proc_status *out);

/* Decide from a parsed status whether pid can be attached.  yama_scope is
 * /proc/sys/kernel/yama/ptrace_scope, or -1 when Yama is absent. */
int preflight_check_status(pid_t pid, const struct proc_status *st,
                           const struct tracer_identity *me, int yama_scope,
                           struct mp_error *err);

/* The ELF header of the executable: refuse 32-bit (and foreign) programs. */
int preflight_check_elf_header(pid_t pid, const unsigned char *hdr, size_t len,
                               struct mp_error *err);

/* The /proc memprof sees must be its own pid namespace's: under
 * `nsenter -m` without -p it is another's, and its pids name other
 * processes than ptrace's.  self_pid is getpid(), proc_self what /proc/self
 * links to (NULL when it does not resolve), proc_mounted whether /proc is
 * a procfs at all. */
int preflight_check_proc_view(pid_t self_pid, const char *proc_self, bool proc_mounted,
                              struct mp_error *err);

/* All of the above on the live process.  A process whose main thread has
 * exited is judged by a live thread. */
int preflight_run(pid_t pid, struct mp_error *err);

/* Who traces thread tid of pid, for messages: "memprof (pid M)",
 * "process M (gdb)", or "" when nobody does. */
void preflight_thread_tracer(pid_t pid, pid_t tid, char *buf, size_t len);

/* Whether the process runs in secure-execution mode (AT_SECURE: setuid,
 * setgid or file capabilities), where jemalloc ignores MALLOC_CONF. */
bool preflight_secure_exec(pid_t pid);

#endif
