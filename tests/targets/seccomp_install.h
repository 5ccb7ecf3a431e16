/* seccomp_install.h - how a test target puts itself under a seccomp filter
 * program (no_new_privs first, as an unprivileged process must), exiting
 * if the kernel refuses it. */
#ifndef MEMPROF_SECCOMP_INSTALL_H
#define MEMPROF_SECCOMP_INSTALL_H

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static inline void seccomp_install(struct sock_filter *prog, unsigned short len)
{
    struct sock_fprog fprog = { .len = len, .filter = prog };
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
        syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fprog)) {
        perror("seccomp");
        exit(1);
    }
}

#endif
