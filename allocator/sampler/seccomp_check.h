/* seccomp_check.h - whether the seccomp filters of a process let the
 * sampler's system calls through: every call the sampler makes inside the
 * process while memprof holds none of its threads, and every call a
 * thread memprof holds would make unheld if memprof died in the stop that
 * puts the sampler in (memprof suspends a thread's filter only while it
 * holds it: PTRACE_O_SUSPEND_SECCOMP), judged with this CPU's audit arch
 * and the arguments memprof will pass. */
#ifndef MEMPROF_SAMPLER_SECCOMP_CHECK_H
#define MEMPROF_SAMPLER_SECCOMP_CHECK_H

#include <stdbool.h>
#include <stddef.h>

#include "allocator/sampler/abi.h"
#include "attach/target.h"
#include "lib/seccomp/seccomp_bpf.h"

/* A verdict kept for the session: valid while every thread shows the same
 * seccomp state (filters only stack: a new one changes the count). */
#define SECCOMP_STACKS_MAX 8     /* different filter stacks read in one process */

struct seccomp_verdict_cache {
    bool decided;
    int counts[SECCOMP_STACKS_MAX]; /* the filter counts of the stacks read */
    size_t ncounts;
    char refusal[768];         /* "" allowed */
    enum sampler_probe probe;  /* how the walk checks pages where allowed:
                                * rt_sigprocmask where process_vm_readv is
                                * denied (allocator/sampler/abi.h) */
    char denied[24];           /* the sampler's own call the refusal is for
                                * (made in the process's threads at any
                                * time), "" when it is for another reason */
};

/* Why the sampler may not go into process t under its seccomp filters (a
 * sentence naming the call and what the filter would do, or why the
 * filters cannot be read), or NULL when every call is allowed (or the
 * process has no filter).  May stop one thread (to read the filters). */
const char *sampler_seccomp_refusal(struct target *t, struct seccomp_verdict_cache *cache,
                                    char *buf, size_t len);

/* What is known of that verdict without stopping anything (from the
 * threads' status files and the kept verdict): the process is unfiltered,
 * its filters were judged to allow or to refuse (the refusal in buf), or
 * they are not judged yet (reading them needs a stop).  *nfilters: the
 * filter count of a filtered thread (-1 unknown), 0 when none is. */
enum seccomp_known {
    SECCOMP_KNOWN_NONE,
    SECCOMP_KNOWN_ALLOWS,
    SECCOMP_KNOWN_REFUSES,
    SECCOMP_KNOWN_UNJUDGED,
};
enum seccomp_known sampler_seccomp_known(struct target *t,
                                         const struct seccomp_verdict_cache *cache,
                                         int *nfilters, char *buf, size_t len);

/* The calls judged, for the unit test: n of them; call i as the filter
 * sees it (tgid: the process's pid in its own namespace, 0 unknown), and
 * whether the filter must allow it (else only not kill or trap it). */
size_t sampler_seccomp_ncalls(void);
const char *sampler_seccomp_call(size_t i, long tgid, struct seccomp_call *c, bool *must_allow);

/* Judge the filters (newest first) on every call, with the stack walk
 * checking pages the way way: NULL when the sampler may go in, else the
 * refusal in buf, and in *denied (when not NULL) the sampler's own call it
 * is for (name NULL for another call) and what the filter does to it. */
struct seccomp_denial {
    const char *name;
    char effect[160];          /* "would fail it with errno 1 (EPERM)" */
    char why[200];             /* " (depending on ...)" or "" */
};
const char *sampler_seccomp_judge(pid_t pid, long tgid, const struct seccomp_insn *const *progs,
                                  const size_t *lens, size_t nprogs, enum sampler_probe way,
                                  char *buf, size_t len, struct seccomp_denial *denied);

#endif
