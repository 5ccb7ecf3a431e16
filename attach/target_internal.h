/* target_internal.h - what a struct target holds, shared by the files of
 * attach/ that implement target.h (target.c, dump_dir.c, mallctl_batch.c). */
#ifndef MEMPROF_TARGET_INTERNAL_H
#define MEMPROF_TARGET_INTERNAL_H

#include "attach/mapped_object.h"
#include "attach/remote_call.h"
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
    struct jemalloc_copy *copies;
    size_t ncopies, selected;
    struct unwind_checker *unwind;
    struct remote_ctx ctx;
    bool ctx_ready;
    struct target_pause_stats pauses;
    double pause_history[PAUSE_HISTORY]; /* ring of the last stops, for median/p90 */
    char *dump_dir;             /* as the target sees it, NULL until created */
    char *dump_dir_host;        /* the same directory as memprof reaches it */
};

/* Run the calls on one stopped thread (mallctl_batch.c). */
int mallctl_batch_run(struct target *t, struct mallctl_call *calls, size_t n,
                      struct mp_error *err);

/* Remove the session's dump directory and what is left in it (dump_dir.c). */
void dump_dir_remove(struct target *t);

#endif
