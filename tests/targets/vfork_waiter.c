/* vfork_waiter.c - a process whose only thread waits in vfork for its
 * child, as a program spawning a command with posix_spawn or vfork waits
 * until the child execs: the kernel lets no ptrace stop reach the thread
 * until then (its wait is killable only), so memprof's interrupt waits and
 * gives up after its time limit.  The child execs nothing: it prints
 * "ready child=PID" and waits for a signal; SIGTERM to the child ends it,
 * and the parent then prints "resumed" and sleeps on.  The child, named
 * vfork_child, dies with the parent (PR_SET_PDEATHSIG). */
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "target_common.h"

static char child_stack[64 * 1024] __attribute__((aligned(16)));

/* Runs in the child, on the parent's memory: system calls only. */
static int child(void *arg)
{
    (void)arg;
    char line[48];
    syscall(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    syscall(SYS_prctl, PR_SET_NAME, "vfork_child", 0, 0, 0);
    int n = snprintf(line, sizeof line, "ready child=%ld\n", (long)syscall(SYS_getpid));
    syscall(SYS_write, 1, line, (size_t)n);
    for (;;)
        syscall(SYS_pause);
    return 0;
}

int main(void)
{
    void *p = malloc(1 << 20);      /* something on the heap to report */
    memset(p, 1, 1 << 20);
    fflush(stdout);
    if (clone(child, child_stack + sizeof child_stack, CLONE_VM | CLONE_VFORK | SIGCHLD,
              NULL) < 0)
        return 1;
    printf("resumed\n");
    fflush(stdout);
    for (;;)
        pause();
}
