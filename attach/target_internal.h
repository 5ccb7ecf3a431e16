/* target_internal.h - what a struct target holds, shared by the files of
 * attach/ that implement target.h (target.c, memfd.c, private_dir.c) and
 * by nothing else: allocator/ sees only target.h. */
#ifndef MEMPROF_TARGET_INTERNAL_H
#define MEMPROF_TARGET_INTERNAL_H

#include "attach/target.h"
#include "attach/unwind_check.h"

/* How many recent stops the median and p90 are taken over: bounded so a
 * long session costs neither memory nor time. */
#define PAUSE_HISTORY 1024

struct target {
    pid_t pid;
    unsigned long long start_time; /* proc_start_time when opened */
    char *exe;
    uid_t euid;                 /* the target's, for the dump directory */
    gid_t egid;
    struct mapped_objects objs;
    void *allocator;            /* target_set_allocator */
    void (*allocator_free)(void *);
    struct unwind_checker *unwind;
    struct remote_ctx ctx;
    bool ctx_ready;
    struct target_pause_stats pauses;
    double pause_history[PAUSE_HISTORY]; /* ring of the last stops, for median/p90 */
    int lock_fd;                /* session_lock.h: one memprof per process */
    bool entry_kept;            /* a dead memprof's trampoline sits at the entry
                                 * point: used, never removed */
    bool seccomp_suspended;     /* a call ran with the thread's filter suspended */
    bool loader_waited;         /* attach waited once for the dynamic loader */
    bool exec_seen;             /* a thread was inside execve as its maps were read */
    bool prio_noted;            /* note_stop_priority said it */
    FILE *notes;                /* target_set_notes */
    struct target_libc libc;    /* memfd.c */
    bool memfd_swept;           /* a stop closed the memfds dead memprofs left */
    /* The private directory (private_dir.c), once made: */
    bool dump_dir_made;         /* it exists: */
    int dump_parent_fd;         /*   O_PATH descriptor of where it was made */
    int dump_dir_fd;            /*   and of the directory itself */
    char dump_dir_name[64];     /*   its name in the parent */
    char *dump_dir;             /*   as the target sees it */
};

/* The memfds ("memfd:memprof-dump-PID") that memprofs which have died
 * left open in the process: listed before a stop, closed in it (memfd.c).
 * memfd_sweep_list returns how many it found. */
size_t memfd_sweep_list(struct target *t, int *fds, size_t cap);
void memfd_sweep_in_stop(struct target *t, struct remote_stop *s, const int *fds,
                         size_t n);
/* Whether the memprof with this pid still runs (when unsure: yes). */
bool memprof_alive(pid_t pid);

/* Remove the private directory and what is left in it, through its
 * parent's descriptor (works after the process has gone; private_dir.c). */
void dump_dir_remove(struct target *t);

#endif
