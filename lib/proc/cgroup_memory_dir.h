/* cgroup_memory_dir.h - from a process's /proc/PID/cgroup (as memprof's
 * own cgroup namespace sees it: the host's view when memprof runs on the
 * host, whatever namespace the process is in) to the directory that holds
 * its cgroup's memory.* files, on cgroup v2, v1 or a hybrid of both.  The
 * cgroup path is the process's to choose (through its cgroup namespace,
 * and the names of cgroups it may create): it is checked to hold no "."
 * or ".." and opened beneath the hierarchy's mount, never following a
 * link, never leaving that file system. */
#ifndef MEMPROF_CGROUP_MEMORY_DIR_H
#define MEMPROF_CGROUP_MEMORY_DIR_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/proc/cgroup_file.h"   /* CGROUP_PATH_MAX: one bound for every cgroup path */

/* A mounted cgroup hierarchy, from memprof's /proc/self/mountinfo. */
struct cgroup_mount {
    bool found;
    char dir[256];        /* where it is mounted ("/sys/fs/cgroup/memory") */
    char root[256];       /* the cgroup at its top ("/" unless a bind mount) */
};

struct cgroup_mounts {
    struct cgroup_mount v2;           /* cgroup2 (v2, or "unified" on a hybrid) */
    struct cgroup_mount v1_memory;    /* cgroup v1 with the memory controller */
};

/* The hierarchies of a mountinfo text (cut lines and odd fields are
 * skipped; a mount of root "/" is preferred to a bind mount of a part). */
void cgroup_mounts_parse(const char *text, size_t len, struct cgroup_mounts *m);

enum cgroup_version { CGROUP_NONE, CGROUP_V1, CGROUP_V2 };

/* One cgroup's directory: a hierarchy's mount and a path beneath it. */
struct cgroup_dir {
    enum cgroup_version version;
    char mount[256];
    char rel[CGROUP_PATH_MAX];       /* relative to mount, "" for its top */
    char path[CGROUP_PATH_MAX];      /* the cgroup as /proc/PID/cgroup names it */
};

struct cgroup_memory_where {
    struct cgroup_dir memory;    /* memory.current or v1's memory.usage_in_bytes */
    bool has_pressure;
    struct cgroup_dir pressure;  /* the v2 directory: memory.pressure (PSI) */
};

/* Where the memory controller's files of the process with this
 * /proc/PID/cgroup text are: its v1 memory hierarchy where one is mounted
 * (hybrid and legacy hosts), else its v2 cgroup; and the v2 cgroup for
 * pressure whenever cgroup2 is mounted.  False with why (a sentence) when
 * there is none or the path is refused. */
bool cgroup_memory_locate(const char *text, size_t len, const struct cgroup_mounts *m,
                          struct cgroup_memory_where *w, char *why, size_t whylen);

/* d's directory, opened O_PATH beneath its mount (checked to be a cgroup
 * file system).  -1 with why when it cannot be. */
int cgroup_dir_open(const struct cgroup_dir *d, char *why, size_t whylen);

#endif
