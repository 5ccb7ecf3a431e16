/* no_perf_events.c - runs a command (argv[1..]) under a seccomp filter that
 * makes perf_event_open fail with EACCES, as a container's seccomp profile
 * or a unit's SystemCallFilter=~perf_event_open would: t_faults runs
 * memprof so to see `faults` say why the kernel refused and what to do.
 * Every other system call is allowed. */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "seccomp_install.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: no_perf_events COMMAND [ARGS...]\n");
        return 2;
    }
    struct sock_filter prog[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_perf_event_open, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EACCES),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    seccomp_install(prog, sizeof prog / sizeof prog[0]);
    execv(argv[1], argv + 1);
    perror(argv[1]);
    return 127;
}
