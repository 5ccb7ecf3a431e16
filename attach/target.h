/* target.h - a live process memprof works on, the engine's one handle on
 * it: opened (session lock, preflight, mapped objects, the allocator's
 * code found by a probe, the remote-call context), stopped one thread at a
 * time for a body of calls (target_stop_run), closed without leaving
 * anything behind.
 *
 * attach/ knows processes, threads, ELF symbols and calling conventions; it
 * knows nothing of heap profiles nor of any allocator's interface: those
 * live in allocator/, which hangs its own state on the target.  Opening a
 * target stops nothing. */
#ifndef MEMPROF_TARGET_H
#define MEMPROF_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "attach/code_range.h"
#include "attach/mapped_object.h"
#include "attach/proc_fate.h"
#include "attach/remote_call.h"
#include "lib/base/error.h"

/* Where memprof may find symbols a stripped target lacks. */
struct target_options {
    const char *exe;           /* --exe: an unstripped copy of the executable */
    const char *debug_dir;     /* --debug-dir; NULL: /usr/lib/debug */
};

struct target_pause_stats {
    unsigned calls;            /* remote call sessions so far */
    double last_us, max_us;    /* how long the chosen thread was stopped */
    double total_us;           /* all the stops of the session together */
    pid_t last_tid;
    unsigned unsafe_retries;   /* threads refused as unsafe (in the allocator etc.) */
    double median_us;          /* median over the last (up to 1024) stops */
    double p90_us;             /* 90th percentile over the same stops */
};

/* With MEMPROF_TRACE_PAUSES=1 in memprof's environment, attach/ prints one
 * line per thread stop to stderr:
 *   pause tid=N us=X calls=K stop=A check=B body=C release=D [refused (WHY)]
 * (X from PTRACE_INTERRUPT to the return of PTRACE_DETACH; K remote calls
 * made in that stop, 0 for a thread refused as unsafe; A..D the phases),
 * and for a thread passed over without a stop because another tracer
 * holds it:
 *   skip tid=N (traced: thread N by process P (COMM)) */

struct target;

/* What an allocator looks for in a process being opened (allocator/):
 * find is given the process's mapped objects and the operator's symbol
 * sources; it keeps what it found with target_set_allocator, fills
 * unsafe with its code (no thread stopped there is borrowed) and returns
 * 0, or -1 with err saying what the process uses instead.  When it fails
 * while the process's dynamic loader is still at work (just started or
 * exec'd), the engine waits for the loader and asks once more
 * (target_loader_waited is then true); a probe that cannot tell whether
 * the loader is done returns TARGET_PROBE_LOADING to be asked once more
 * after the process's files settle, whatever they do. */
#define TARGET_PROBE_LOADING (-2)
struct target_probe {
    int (*find)(struct target *t, struct mapped_objects *objs,
                const struct target_options *opts, struct code_ranges *unsafe,
                void *arg, struct mp_error *err);
    void *arg;
};

/* Take the session lock (one memprof per process: a second is refused with
 * the holder's pid), check the process (gone, zombie, stopped, traced,
 * permissions, 32-bit, seccomp, Yama), read its objects (symbols from opts
 * for stripped ones; opts may be NULL) and run the probe.  Stops nothing.
 * A process whose main thread has exited is reached through a live
 * thread. */
struct target *target_open_with(pid_t pid, const struct target_options *opts,
                                const struct target_probe *probe, struct mp_error *err);

/* Detach from anything still attached, remove the session's dump directory
 * in the target's filesystem, release the session lock, free.  Safe on
 * NULL. */
void target_close(struct target *t);

pid_t target_pid(const struct target *t);
/* The probe runs again, after the engine waited for the dynamic loader. */
bool target_loader_waited(const struct target *t);
const char *target_exe(const struct target *t);      /* /proc/PID/exe target */
/* The process's /proc directory as a live thread reaches it: "/proc/PID",
 * or "/proc/PID/task/TID" once the main thread has exited (pthread_exit)
 * and its own entries no longer reach the process's memory or files. */
void target_proc_dir(const struct target *t, char *buf, size_t len);
int target_thread_count(const struct target *t);     /* live count */

const struct mapped_objects *target_objects(const struct target *t);

/* What became of the process since it was opened: still the same program,
 * exited, or running a new program (exec); PROC_SAME when it cannot tell. */
enum proc_fate target_fate(const struct target *t);

/* The allocator's state (allocator/), freed with free_fn at target_close
 * or when replaced. */
void target_set_allocator(struct target *t, void *state, void (*free_fn)(void *));
void *target_allocator(const struct target *t);

/* body on one stopped thread (remote_session): a safe thread is chosen,
 * its state saved and put back, the stop counted in the pause statistics.
 * The session's first stop also closes the memfds dead memprofs left in
 * the process.  Returns body's result, or -1 with err set when no call
 * could be made (the target is left untouched, or, if it died meanwhile,
 * err says so). */
int target_stop_run(struct target *t, remote_body_fn body, void *arg,
                    struct mp_error *err);
/* The same on thread tid alone (waiting, as for any thread, until it is
 * safe to stop): for what the kernel tells only of one given thread. */
int target_stop_run_thread(struct target *t, pid_t tid, remote_body_fn body, void *arg,
                           struct mp_error *err);

/* The process's own C library functions memprof may call (runtime
 * addresses, 0 when absent; the executable's for a static program),
 * looked up once. */
struct target_libc {
    bool looked;
    uint64_t memfd_create, close, syscall;
    uint64_t mmap, mprotect, munmap;
};
const struct target_libc *target_libc(struct target *t);

/* Output carried out of the process through an anonymous memfd, inside one
 * stop (attach/memfd.c; docs/security.md).  target_memfd_possible: false
 * with why when the process lacks the functions (or a test forbids it).
 * target_memfd_create: 0 with *fd the process's descriptor, or *fd -1 and
 * why when this way cannot be used; -1 with err when the call failed.
 * target_memfd_open: memprof's own descriptor on the same file (-1, why).
 * target_memfd_close: the process closes its descriptor. */
bool target_memfd_possible(struct target *t, char *why, size_t whylen);
int target_memfd_create(struct remote_stop *s, struct target *t, int *fd, char *why,
                        size_t whylen, struct mp_error *err);
int target_memfd_open(struct remote_stop *s, int fd, char *why, size_t whylen);
int target_memfd_close(struct remote_stop *s, struct target *t, int fd,
                       struct mp_error *err);

/* Read what a memfd or private-directory file holds from memprof's own
 * descriptor: a regular file of at most TARGET_FILE_MAX bytes (*data
 * malloc'd, NUL-terminated); what names it in messages. */
#define TARGET_FILE_MAX (1024L * 1024 * 1024)
int target_read_fd(int fd, const char *what, char **data, size_t *len,
                   struct mp_error *err);

/* Read a NUL-terminated string at a target address (no thread stopped). */
int target_read_string(struct target *t, uint64_t addr, char *buf, size_t len,
                       struct mp_error *err);

const struct target_pause_stats *target_pauses(const struct target *t);

/* Where attach/ writes notes on what it did to the process that the
 * operator must know (once per session); NULL (the default): nowhere. */
void target_set_notes(struct target *t, FILE *notes);
/* Why no further call is made into the process in this session (a call
 * faulted and may have left an allocator lock held, a call was left
 * running, the process exec'd or exited), or NULL while calls are made.
 * Every later target_stop_run fails with this reason; target_close is
 * still safe. */
const char *target_calls_refused(const struct target *t);

/* A thread was left inside a call (a call past MEMPROF_CALL_TIMEOUT
 * seconds, default 5, or one memprof's SIGTERM/SIGINT/SIGHUP/SIGQUIT
 * interrupted), or did not stop: it restores itself when the call
 * returns, and memprof must exit now (its exit also makes the kernel
 * release a thread it could not detach). */
bool target_must_exit(const struct target *t);


/* A trampoline an earlier memprof left at the entry point (it died while a
 * thread was in a call, which may still return there): this session uses
 * those bytes and leaves them. */
bool target_entry_kept(const struct target *t);

/* Why memprof does not raise its own scheduling priority during stops
 * (attach/stop_priority.h), or NULL when it does (or no stop was made yet
 * and nothing forbids it).  The reason is also written once to the notes
 * stream, unless the operator turned the raise off
 * (MEMPROF_STOP_PRIORITY=0). */
const char *target_stop_priority(const struct target *t);

/* Why a raised memprof could not keep the CPUs awake during its last stop
 * (no write access to /dev/cpu_dma_latency: stop_priority.h), or NULL. */
const char *target_stop_cpus_asleep(const struct target *t);

/* A call ran with its thread's seccomp filter suspended. */
bool target_seccomp_suspended(const struct target *t);

/* The process runs in secure-execution mode (setuid, setgid or file
 * capabilities: AT_SECURE), where allocators ignore their environment
 * (jemalloc its MALLOC_CONF). */
bool target_secure_exec(const struct target *t);

/* memprof's private directory in the process's filesystem (user_dir is
 * --dump-dir, or else the first usable of the process's TMPDIR, /tmp,
 * /var/tmp, /dev/shm), as the process sees it, for files the process
 * writes when a memfd cannot carry them, or on its own (prof.gdump with
 * prof.prefix pointed there).  Made once, only through file descriptors
 * (docs/security.md).  Removed, with what is
 * left in it, when the target is closed.  NULL with err set. */
const char *target_private_dir(struct target *t, const char *user_dir, struct mp_error *err);
/* The names in that directory starting with prefix, sorted (*names and
 * each name malloc'd).  Returns how many, or -1 out of memory. */
long target_private_dir_list(struct target *t, const char *prefix, char ***names);
/* Read and remove one of them: only a regular file the process's user
 * wrote, opened without following links, at most 1 GiB.  Returns 0 (*data
 * malloc'd), 1 when it was modified less than min_age seconds ago (left
 * there: it may still be being written), -1 with err set. */
int target_private_dir_take(struct target *t, const char *name, double min_age,
                            char **data, size_t *len, struct mp_error *err);

#endif
