/* targets.h - which processes memprof serve may touch: every process of
 * the host the --target rules allow (all when there are none), never
 * memprof itself nor its workers, never a kernel thread. */
#ifndef MEMPROF_SERVE_TARGETS_H
#define MEMPROF_SERVE_TARGETS_H

#include <limits.h>
#include <stddef.h>
#include <sys/types.h>

#include "lib/base/error.h"
#include "serve/config.h"
#include "session/process_container.h"

struct served_process {
    pid_t pid;
    char comm[32];              /* /proc/PID/comm, as the process set it */
    char exe[PATH_MAX];         /* its executable's path ("" when unreadable) */
    int exe_errno;              /* why it was unreadable (EACCES: no ptrace access) */
    uid_t uid;                  /* real uid */
    char user[64];              /* its name, or the number */
    const char *name;           /* the matching rule's name=, or NULL */
    struct process_container ct; /* its cgroup, container, pod, namespace pid */
};

/* Read process pid and decide whether the rules allow it: 0, or -1 with
 * err (kind MP_ERROR_NO_PROCESS for no such process, MP_ERROR_DENIED for
 * one the rules or memprof's own ids leave out). */
int targets_lookup(const struct serve_config *cfg, pid_t pid, struct served_process *p,
                   struct mp_error *err);

/* Every process the rules allow, in pid order: how many (*list malloc'd),
 * or -1 with err. */
long targets_list(const struct serve_config *cfg, struct served_process **list,
                  struct mp_error *err);

/* Parse one --target rule ("name=web,user=www-data,exe=/usr/sbin/nginx*",
 * "container=3f2a9c1b7d4e", "cgroup=/kubepods.slice/..."):
 * 0, or -1 with err saying what is wrong. */
int targets_parse_rule(const char *text, struct serve_rule *r, struct mp_error *err);
void targets_free_rules(struct serve_rule *rules, size_t n);

#endif
