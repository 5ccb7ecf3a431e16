/* seccomp_filtered.c - a program under a seccomp filter of the usual
 * allow-list kind (systemd's SystemCallFilter=, container profiles): every
 * system call number it knows is allowed, anything else (such as -1, the
 * number a tracer writes to skip a call) kills the process.  Otherwise
 * like plain: a worker churning allocations, the main thread asleep. */
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "seccomp_install.h"
#include "target_common.h"

#define KNOWN_SYSCALLS 1024u

static void install_filter(void)
{
    struct sock_filter prog[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, KNOWN_SYSCALLS, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    seccomp_install(prog, sizeof prog / sizeof prog[0]);
}

int main(void)
{
    install_filter();       /* before the worker: it inherits the filter */
    pthread_t t;
    pthread_create(&t, NULL, churn_forever, NULL);
    announce_ready();
    pthread_join(t, NULL);
    return 0;
}
