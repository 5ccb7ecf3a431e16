/* target.h - a live process whose jemalloc memprof drives, and the one
 * entry point the rest of memprof uses to reach it.
 *
 * attach/ knows processes, threads, ELF symbols and calling conventions; it
 * knows nothing of heap profiles.  Opening a target stops nothing: threads
 * are stopped one at a time, only for the duration of target_mallctl(). */
#ifndef MEMPROF_TARGET_H
#define MEMPROF_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "lib/base/error.h"

/* One copy of jemalloc found in the target. */
struct jemalloc_copy {
    char *object;              /* path of the ELF object holding it (as in maps) */
    char *prefix;              /* "" for plain mallctl, "je_", "_rjem_" ... */
    uint64_t mallctl;          /* runtime address of <prefix>mallctl */
    uint64_t malloc_stats_print; /* runtime address, 0 when absent */
    uint64_t text_start, text_end; /* runtime range of the object's code */
    bool dynamic;              /* found in .dynsym (else only in .symtab) */
    bool static_copy;          /* linked into the executable itself */
    char *symbols_from;        /* the debug file or --exe copy its symbols
                                * came from; NULL: the object's own */
};

/* Where memprof may find symbols a stripped target lacks. */
struct target_options {
    const char *exe;           /* --exe: an unstripped copy of the executable */
    const char *debug_dir;     /* --debug-dir; NULL: /usr/lib/debug */
};

/* One mallctl() call.  old/new are buffers in memprof's memory; the attach
 * layer copies them into and out of the target. */
struct mallctl_call {
    const char *name;
    void *old;                 /* NULL: do not read */
    size_t oldlen;             /* in: size of *old; out: what mallctl wrote */
    const void *new;           /* NULL: do not write */
    size_t newlen;
    const char *new_string;    /* when set (and new is NULL), the string is
                                * copied into the target and newp points to a
                                * `const char *` holding its address: for
                                * prof.dump, prof.prefix, thread.prof.name */
    int ret;                   /* out: mallctl's return value (0, ENOENT...) */
};

struct target_pause_stats {
    unsigned calls;            /* remote call sessions so far */
    double last_us, max_us;    /* how long the chosen thread was stopped */
    pid_t last_tid;
    unsigned unsafe_retries;   /* threads refused as unsafe (in jemalloc etc.) */
    double median_us;          /* median over the last (up to 1024) stops */
    double p90_us;             /* 90th percentile over the same stops */
};

/* With MEMPROF_TRACE_PAUSES=1 in memprof's environment, attach/ prints one
 * line per thread stop to stderr:
 *   pause tid=N us=X calls=K stop=A check=B body=C release=D [refused (WHY)]
 * (X from PTRACE_INTERRUPT to the return of PTRACE_DETACH; K remote calls
 * made in that stop, 0 for a thread refused as unsafe; A..D the phases). */

struct target;

/* Take the session lock (one memprof per process: a second is refused with
 * the holder's pid), check the process (gone, zombie, stopped, traced,
 * permissions, 32-bit, seccomp, Yama) and find its jemalloc copies.  Stops
 * nothing.  A process whose main thread has exited is reached through a
 * live thread. */
struct target *target_open(pid_t pid, struct mp_error *err);
/* The same, with symbol sources for stripped objects (opts may be NULL). */
struct target *target_open_with(pid_t pid, const struct target_options *opts,
                                struct mp_error *err);

/* Detach from anything still attached, remove the session's dump directory
 * in the target's filesystem, release the session lock, free.  Safe on
 * NULL. */
void target_close(struct target *t);

pid_t target_pid(const struct target *t);
const char *target_exe(const struct target *t);      /* /proc/PID/exe target */
/* The process's /proc directory as a live thread reaches it: "/proc/PID",
 * or "/proc/PID/task/TID" once the main thread has exited (pthread_exit)
 * and its own entries no longer reach the process's memory or files. */
void target_proc_dir(const struct target *t, char *buf, size_t len);
int target_thread_count(const struct target *t);     /* live count */

size_t target_jemalloc_count(const struct target *t);
const struct jemalloc_copy *target_jemalloc(const struct target *t, size_t i);
/* Which copy target_mallctl uses (default 0). */
int target_jemalloc_select(struct target *t, size_t i, struct mp_error *err);
size_t target_jemalloc_selected(const struct target *t);

/* Run n mallctl() calls, in order, in one stop of one thread.  Returns 0
 * when every call ran (each call's ret says what mallctl answered), -1 with
 * err set when the calls could not be made (the target is left untouched,
 * or, if it died meanwhile, err says so). */
int target_mallctl(struct target *t, struct mallctl_call *calls, size_t n,
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
 * Every later target_mallctl fails with this reason; target_close is
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

/* A call ran with its thread's seccomp filter suspended. */
bool target_seccomp_suspended(const struct target *t);

/* The process runs in secure-execution mode (setuid, setgid or file
 * capabilities: AT_SECURE), where jemalloc ignores MALLOC_CONF. */
bool target_secure_exec(const struct target *t);

/* What a dump tells besides its bytes. */
struct target_dump_info {
    int mallctl_ret;           /* prof.dump's own refusal (ENOENT: profiling is
                                * not enabled...), else 0 */
    const char *dir;           /* NULL: the dump went through an anonymous
                                * in-memory file (nothing with a name); else
                                * the private directory used, as the process
                                * sees it */
    const char *why_dir;       /* when dir is set: why not in memory */
};

/* Have the process write its heap profile and bring the bytes back (at
 * most 1 GiB; *data is malloc'd and NUL-terminated).  First through an
 * anonymous memfd the process creates, dumps into (/proc/thread-self/fd/N)
 * and closes in the same stop; when that cannot work, through a private
 * directory made only through file descriptors in dump_dir (the user's
 * --dump-dir, as the process sees it) or else the first usable of the
 * process's TMPDIR, /tmp, /var/tmp, /dev/shm.  See docs/security.md.
 * Returns 0; -1 with err set (and info->mallctl_ret when prof.dump itself
 * refused). */
int target_dump_profile(struct target *t, const char *dump_dir, char **data,
                        size_t *len, struct target_dump_info *info,
                        struct mp_error *err);

/* memprof's private directory in the process's filesystem (made as for a
 * dump that cannot go through memory: see target_dump_profile; user_dir is
 * --dump-dir), as the process sees it, for files the process writes on its
 * own (prof.gdump with prof.prefix pointed there).  Removed, with what is
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

/* jemalloc output captured through a write callback that memprof places
 * in the process for one stop (allocator/jemalloc/capture.c): never the process's
 * stdout, stderr or a file.  Either malloc_stats_print(cb, buf, print_opts)
 * or the write-only mallctl dump_name given {cb, buf}
 * (experimental.prof_recent.alloc_dump).  calls and after (already
 * checked against mallctl's table) run before and after it in the same
 * stop. */
struct target_capture {
    const char *print_opts;     /* malloc_stats_print's opts ("J") */
    const char *dump_name;      /* or this mallctl (print_opts unused) */
    size_t cap;                 /* at most this many bytes (up to 1 GiB) */
    struct mallctl_call *calls;
    size_t ncalls;
    struct mallctl_call *after; /* and these after the output, same stop */
    size_t nafter;
    /* out */
    char *data;                 /* malloc'd, NUL-terminated */
    size_t len;
    bool truncated;             /* the output went past cap: data is cut */
    int dump_ret;               /* dump_name's own answer */
    char why[512];              /* internal */
};

/* Returns 0 (c->data set), or -1 with err set: the process refused the
 * executable mapping (a security policy), or the call failed. */
int target_capture(struct target *t, struct target_capture *c, struct mp_error *err);

#endif
