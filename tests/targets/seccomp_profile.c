/* seccomp_profile.c - a glibc-malloc program under a seccomp filter built
 * with libseccomp, as container runtimes and systemd build theirs, for
 * memprof's sampler to be judged against (t_sampler_seccomp):
 *   default        podman's and Docker's kind: every call not listed fails
 *                  with EPERM; the list allows what a server needs
 *   kill-ppoll     everything allowed but ppoll, which kills the process
 *   errno-vm-readv everything allowed but process_vm_readv: EPERM (as
 *                  Docker's and containerd's default profiles without
 *                  CAP_SYS_PTRACE)
 *   errno-vm-readv-sigmask  everything allowed but process_vm_readv and
 *                  rt_sigprocmask: EPERM (both ways the sampler has to
 *                  check a stack page)
 *   thread-MODE    the main thread unfiltered; the worker installs MODE's
 *                  filter on itself alone (no TSYNC)
 * The filter is installed before the worker starts (it inherits it), but
 * in a thread- mode.  The worker keeps 64 blocks live from
 * seccomp_profile_alloc, called under a frame of 3 pages
 * (seccomp_profile_far: a stack walk from malloc to the worker must check
 * pages past its first), and replaces one every millisecond. */
#include <errno.h>
#include <pthread.h>
#include <seccomp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "target_common.h"

static const char *const allowed[] = {
    "read", "write", "readv", "writev", "pread64", "pwrite64", "openat", "close", "fstat",
    "newfstatat", "statx", "lseek", "mmap", "mprotect", "munmap", "mremap", "brk", "madvise",
    "rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "rt_sigsuspend", "rt_sigtimedwait",
    "sigaltstack", "ioctl", "fcntl", "dup", "dup3", "pipe2", "getpid", "gettid", "getppid",
    "getuid", "geteuid", "getgid", "getegid", "tgkill", "kill", "futex", "set_robust_list",
    "get_robust_list", "rseq", "set_tid_address", "clone", "clone3", "exit", "exit_group",
    "nanosleep", "clock_nanosleep", "clock_gettime", "gettimeofday", "sched_yield",
    "sched_getaffinity", "getrandom", "poll", "ppoll", "epoll_create1", "epoll_ctl",
    "epoll_wait", "epoll_pwait", "restart_syscall", "memfd_create", "ftruncate",
    "process_vm_readv", "process_vm_writev", "pidfd_open", "pidfd_getfd", "prlimit64",
    "uname", "prctl", "arch_prctl", "wait4", "membarrier", "getcwd",
};

static void add(scmp_filter_ctx ctx, uint32_t action, const char *name)
{
    int nr = seccomp_syscall_resolve_name(name);
    if (nr == __NR_SCMP_ERROR || seccomp_rule_add(ctx, action, nr, 0) < 0) {
        fprintf(stderr, "seccomp rule for %s failed\n", name);
        exit(1);
    }
}

static bool thread_mode(const char *mode)
{
    return strncmp(mode, "thread-", 7) == 0;
}

static void install(const char *mode)
{
    scmp_filter_ctx ctx;
    if (thread_mode(mode))
        mode += 7;
    if (strcmp(mode, "default") == 0) {
        ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM));
        for (size_t i = 0; ctx && i < sizeof allowed / sizeof allowed[0]; i++)
            add(ctx, SCMP_ACT_ALLOW, allowed[i]);
    } else {
        ctx = seccomp_init(SCMP_ACT_ALLOW);
        if (ctx && strcmp(mode, "kill-ppoll") == 0)
            add(ctx, SCMP_ACT_KILL_PROCESS, "ppoll");
        else if (ctx && strcmp(mode, "errno-vm-readv") == 0)
            add(ctx, SCMP_ACT_ERRNO(EPERM), "process_vm_readv");
        else if (ctx && strcmp(mode, "errno-vm-readv-sigmask") == 0) {
            add(ctx, SCMP_ACT_ERRNO(EPERM), "process_vm_readv");
            add(ctx, SCMP_ACT_ERRNO(EPERM), "rt_sigprocmask");
        } else {
            fprintf(stderr, "usage: seccomp_profile [thread-]default|kill-ppoll|"
                    "errno-vm-readv|errno-vm-readv-sigmask\n");
            exit(2);
        }
    }
    /* TSYNC off: a filter of this thread only, as a thread-only sandbox */
    if (!ctx || seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 0) < 0 || seccomp_load(ctx) < 0) {
        fprintf(stderr, "seccomp: cannot install the %s filter\n", mode);
        exit(1);
    }
    seccomp_release(ctx);
}

__attribute__((noinline)) static void *seccomp_profile_alloc(size_t size)
{
    void *p = malloc(size);
    if (p)
        memset(p, 0x5a, size);
    return p;
}

__attribute__((noinline)) static void *seccomp_profile_far(size_t size)
{
    volatile char pad[3 * 4096];
    pad[0] = (char)size;
    void *p = seccomp_profile_alloc(size);
    __asm__ volatile("" ::: "memory");
    return pad[0] == (char)size ? p : NULL;
}

static void *worker(void *arg)
{
    const char *mode = arg;
    if (thread_mode(mode))
        install(mode);
    void *live[64] = {0};
    for (unsigned i = 0; ; i++) {
        free(live[i % 64]);
        live[i % 64] = seccomp_profile_far(4096 + (i % 64) * 512);
        usleep(1000);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "default";
    if (!thread_mode(mode))
        install(mode);
    pthread_t t;
    pthread_create(&t, NULL, worker, (void *)mode);
    announce_ready();
    pthread_join(t, NULL);
    return 0;
}
