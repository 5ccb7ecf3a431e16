/* threads.h - the threads of a live process and which one to stop for a
 * remote call: one asleep in a restartable system call first, running ones
 * after, threads whose syscall would see EINTR, threads making a process
 * or thread and jemalloc's background thread last. */
#ifndef MEMPROF_THREADS_H
#define MEMPROF_THREADS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/base/error.h"

enum thread_rank {
    RANK_RESTARTABLE_SLEEP = 0, /* futex, read, poll, nanosleep ...: restarts */
    RANK_OTHER_SLEEP,           /* in a syscall memprof does not classify */
    RANK_RUNNING,               /* on a CPU, or not in a syscall */
    RANK_EINTR_SLEEP,           /* epoll_wait & co would return EINTR */
    RANK_NEW_TASK,              /* in clone/fork/vfork: stops late, inside libc */
    RANK_ALLOCATOR_THREAD,      /* jemalloc_bg_thd: lives inside jemalloc */
};

struct thread_info {
    pid_t tid;
    char comm[32];
    char state;                 /* from stat: R S D ... */
    bool in_syscall;
    long syscall_nr;
    uint64_t sp, pc;            /* from the syscall file when blocked, else 0 */
    int cpu;                    /* the CPU it last ran on (stat), -1: unknown */
    enum thread_rank rank;
    bool blocks_fault_signal;   /* blocks SIGSEGV, SIGBUS ... (fault_signals.h):
                                 * a call faulting there would reset the
                                 * program's handler; borrowed last of its rank */
};

/* Parse /proc/PID/task/TID/syscall text ("running", "-1 sp pc", or
 * "NR a1..a6 sp pc") into t->in_syscall / t->syscall_nr / t->sp / t->pc. */
void thread_parse_syscall(const char *text, struct thread_info *t);

/* The rank of a thread from its comm, state and syscall. */
enum thread_rank thread_rank(const struct thread_info *t);

/* Whether the SigBlk line of /proc/PID/task/TID/status text blocks a
 * fault signal (false when there is no such line). */
bool thread_status_blocks_fault_signal(const char *status);

/* Order candidates: best rank first, then those that block no fault
 * signal, then by tid. */
void threads_sort(struct thread_info *v, size_t n);

/* How many of the best-ranked threads a session tries per round. */
#define THREADS_CANDIDATES 8

/* List and rank the live threads of pid.  *out is malloc'd. */
int threads_list(pid_t pid, struct thread_info **out, size_t *n, struct mp_error *err);

/* How many threads pid has now, or -1. */
int threads_count(pid_t pid);

/* A thread of pid that has not exited: pid itself while the main thread
 * lives, else the lowest-numbered live thread (a main thread that called
 * pthread_exit stays a zombie while the others run, and its /proc entries
 * no longer reach the process's memory, files or namespaces); -1 when the
 * whole process is gone. */
pid_t threads_live_tid(pid_t pid);

/* Where the process's /proc entries (maps, mem, exe, root, environ, ns/)
 * can be read: "/proc/PID" while the main thread lives, else
 * "/proc/PID/task/TID" of a live thread.  Chosen afresh at each call, so a
 * thread that exits is replaced.  Returns 0, or -1 when the process is gone
 * (buf then holds "/proc/PID", whose opens fail with the usual errors). */
int threads_proc_dir(pid_t pid, char *buf, size_t len);

#endif
