/* seccomp_filters.h - the seccomp filters of a process's threads, read
 * with ptrace(PTRACE_SECCOMP_GET_FILTER): the kernel gives them only to a
 * tracer with CAP_SYS_ADMIN that runs under no filter itself, and only
 * for a thread that tracer holds stopped, so they are read in a stop of
 * the engine (target_stop_run), from the thread it borrows.  What the
 * programs mean is lib/seccomp/'s; which calls to judge, allocator/'s. */
#ifndef MEMPROF_SECCOMP_FILTERS_H
#define MEMPROF_SECCOMP_FILTERS_H

#include <stddef.h>
#include <sys/types.h>

#include "attach/target.h"
#include "lib/base/error.h"
#include "lib/seccomp/seccomp_bpf.h"

/* More than any real stack (the kernel bounds a thread's filters to 32768
 * instructions with 4 counted for each filter). */
#define SECCOMP_FILTERS_MAX 256

struct seccomp_prog {
    struct seccomp_insn *insns;
    size_t n;
};

/* One thread's filters, newest first (the order the kernel runs them). */
struct seccomp_filters {
    pid_t tid;
    struct seccomp_prog *v;
    size_t n;
    int errno_read;            /* the kernel refused with this (0: read) */
};

/* A thread of the process and its seccomp state from its status file. */
struct seccomp_thread {
    pid_t tid;
    int mode;                  /* 0 none, 1 strict, 2 filter, -1 unknown */
    int filters;               /* Seccomp_filters, -1 unknown (before Linux 5.9) */
};

/* The process's threads and their seccomp state (*out malloc'd).  0, or
 * -1 with err. */
int seccomp_threads(struct target *t, struct seccomp_thread **out, size_t *n,
                    struct mp_error *err);

/* Read the filters of thread tid, or (tid 0) of the thread one stop
 * borrows.  0 with out filled (or out->errno_read set where the kernel
 * refused), -1 with err when no stop could be made. */
int seccomp_filters_read(struct target *t, pid_t tid, struct seccomp_filters *out,
                         struct mp_error *err);

void seccomp_filters_free(struct seccomp_filters *f);

#endif
