/* jemalloc.h - jemalloc as memprof drives it: the copies of jemalloc found
 * in a process (shared, LD_PRELOADed, or linked in statically under any
 * prefix), mallctl() calls made in one stop of one thread, heap dumps
 * brought back through a memfd or the private directory, and output
 * captured through a write callback.  Built on the engine's target
 * (attach/target.h), on which it hangs its own state. */
#ifndef MEMPROF_JEMALLOC_H
#define MEMPROF_JEMALLOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "allocator/jemalloc/find.h"
#include "attach/target.h"
#include "lib/base/error.h"

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

/* The probe allocator_open runs while opening a process (see struct
 * target_probe): finds its jemalloc copies, hangs them on t and adds their
 * code to unsafe.  Returns how many (0: none, nothing set), or -1 with err
 * (a copy memprof must not call, or a stripped one). */
int jemalloc_probe(struct target *t, struct mapped_objects *objs,
                   const struct target_options *opts, struct code_ranges *unsafe,
                   struct mp_error *err);

size_t jemalloc_copy_count(const struct target *t);
const struct jemalloc_copy *jemalloc_copy(const struct target *t, size_t i);
/* Which copy jemalloc_mallctl uses (default 0). */
int jemalloc_select(struct target *t, size_t i, struct mp_error *err);
size_t jemalloc_selected(const struct target *t);

/* Run n mallctl() calls, in order, in one stop of one thread.  Returns 0
 * when every call ran (each call's ret says what mallctl answered), -1 with
 * err set when the calls could not be made (the target is left untouched,
 * or, if it died meanwhile, err says so). */
int jemalloc_mallctl(struct target *t, struct mallctl_call *calls, size_t n,
                     struct mp_error *err);

/* What a dump tells besides its bytes. */
struct jemalloc_dump_info {
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
int jemalloc_dump_profile(struct target *t, const char *dump_dir, char **data,
                          size_t *len, struct jemalloc_dump_info *info,
                          struct mp_error *err);

/* jemalloc output captured through a write callback that memprof places
 * in the process for one stop (allocator/jemalloc/capture.c): never the process's
 * stdout, stderr or a file.  Either malloc_stats_print(cb, buf, print_opts)
 * or the write-only mallctl dump_name given {cb, buf}
 * (experimental.prof_recent.alloc_dump).  calls and after (already
 * checked against mallctl's table) run before and after it in the same
 * stop. */
struct jemalloc_capture {
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
int jemalloc_capture(struct target *t, struct jemalloc_capture *c, struct mp_error *err);

#endif
