/* target_internal.h - what a struct target holds, shared by the files of
 * attach/ that implement target.h (target.c, attach/private_dir.c, allocator/jemalloc/mallctl_call.c). */
#ifndef MEMPROF_TARGET_INTERNAL_H
#define MEMPROF_TARGET_INTERNAL_H

#include "attach/mapped_object.h"
#include "attach/remote_call.h"
#include "attach/target.h"
#include "attach/unwind_check.h"

/* Functions of the process's libc a dump needs (runtime addresses, 0 when
 * absent): memfd_create and close, or syscall for both; and what a
 * captured output needs (allocator/jemalloc/capture.c): mmap, mprotect, munmap. */
struct dump_calls {
    bool looked;
    uint64_t memfd_create, close, syscall;
    uint64_t mmap, mprotect, munmap;
};

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
    struct jemalloc_copy *copies;
    size_t ncopies, selected;
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
    FILE *notes;                /* target_set_notes */
    /* Dumps (allocator/jemalloc/dump.c, attach/private_dir.c). */
    struct dump_calls dump_calls;
    bool memfd_swept;           /* a stop closed the memfds dead memprofs left */
    unsigned dump_seq;
    bool dump_dir_made;         /* the fallback directory exists: */
    int dump_parent_fd;         /*   O_PATH descriptor of where it was made */
    int dump_dir_fd;            /*   and of the directory itself */
    char dump_dir_name[64];     /*   its name in the parent */
    char *dump_dir;             /*   as the target sees it */
    char *dump_dir_why;         /*   why the memfd path was not used */
};

/* The process's own libc functions (the executable's, for a static
 * program), looked up once (allocator/jemalloc/dump.c). */
const struct dump_calls *dump_calls(struct target *t);

/* Run the calls on one stopped thread (allocator/jemalloc/mallctl_call.c). */
int mallctl_batch_run(struct target *t, struct mallctl_call *calls, size_t n,
                      struct mp_error *err);

/* One mallctl call on an already stopped thread (allocator/jemalloc/mallctl_call.c). */
int mallctl_batch_call(struct remote_stop *s, const struct target *t,
                       struct mallctl_call *c, struct mp_error *err);

/* body in one stop of one thread, counted in the pause statistics; the
 * session's first stop also closes what dead memprofs left open in the
 * process (allocator/jemalloc/mallctl_call.c). */
int target_stop_run(struct target *t, remote_body_fn body, void *arg,
                    struct mp_error *err);

/* The memfds ("memfd:memprof-dump-PID") that memprofs which have died
 * left open in the process: listed before a stop, closed in it
 * (allocator/jemalloc/dump.c).  dump_sweep_list returns how many it found. */
size_t dump_sweep_list(struct target *t, int *fds, size_t cap);
/* Whether the memprof with this pid still runs (when unsure: yes). */
bool dump_memprof_alive(pid_t pid);
void dump_sweep_in_stop(struct target *t, struct remote_stop *s, const int *fds,
                        size_t n);

/* Read a dump from memprof's own descriptor: a regular file of at most
 * MAX_DUMP bytes; what names it in messages (attach/private_dir.c). */
#define MAX_DUMP (1024L * 1024 * 1024)
int dump_read_fd(int fd, const char *what, char **data, size_t *len,
                 struct mp_error *err);

/* The fallback private directory (attach/private_dir.c): made on first use in
 * user_dir or the first usable candidate, through descriptors only. */
int dump_dir_prepare(struct target *t, const char *user_dir, struct mp_error *err);
/* Read the file `name` the process wrote in it and remove it. */
int dump_dir_take(struct target *t, const char *name, char **data, size_t *len,
                  struct mp_error *err);
/* Remove the directory and what is left in it, through its parent's
 * descriptor (works after the process has gone). */
void dump_dir_remove(struct target *t);

#endif
