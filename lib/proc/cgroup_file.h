/* cgroup_file.h - the host's view of /proc/PID/cgroup: which cgroups a
 * process is in.  cgroup v2 prints one line "0::/PATH"; v1 one line per
 * hierarchy "ID:CONTROLLERS:/PATH" ("4:memory:/docker/ID",
 * "1:name=systemd:/system.slice/x.scope"); a hybrid host both.  The text is
 * the kernel's, but the paths below a delegated cgroup are named by
 * whoever holds it (a container's own systemd): untrusted, bounded,
 * fuzzed (fuzz/fuzz_cgroup.c). */
#ifndef MEMPROF_CGROUP_FILE_H
#define MEMPROF_CGROUP_FILE_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/base/error.h"

#define CGROUP_TEXT_MAX  65536  /* read at most this much of the file */
#define CGROUP_PATH_MAX  4096   /* a longer path is not kept */
#define CGROUP_LINES_MAX 64     /* lines looked at (a v1 host has ~13) */

/* The hierarchies memprof keeps, in the order a container is looked for
 * (cgroup_file_choose): v1's memory first, where a container's memory
 * limit is (issue 33, item 4), then pids and systemd's own named one
 * (every runtime's systemd driver puts the container there too), then
 * v2's unified hierarchy, the only one on a v2 host. */
enum cgroup_role { CGROUP_MEMORY, CGROUP_PIDS, CGROUP_SYSTEMD, CGROUP_UNIFIED, CGROUP_NROLES };

enum cgroup_layout {
    CGROUP_LAYOUT_NONE,         /* no line parsed */
    CGROUP_LAYOUT_V2,           /* only "0::" */
    CGROUP_LAYOUT_V1,           /* only v1 hierarchies */
    CGROUP_LAYOUT_HYBRID,       /* both */
};

struct cgroup_file {
    enum cgroup_layout layout;
    bool has[CGROUP_NROLES];
    char path[CGROUP_NROLES][CGROUP_PATH_MAX];
    unsigned bad_lines;         /* lines skipped for their shape or length */
};

/* Parse a /proc/PID/cgroup text (len bytes, no NUL needed).  Returns 0,
 * or -1 with err when no line has the file's shape. */
int cgroup_file_parse(const char *text, size_t len, struct cgroup_file *out,
                      struct mp_error *err);

/* The name of a role as /proc/PID/cgroup writes its hierarchy: "memory",
 * "pids", "name=systemd", and "unified" for v2's. */
const char *cgroup_role_name(enum cgroup_role r);

/* "v1", "v2", "hybrid"; NULL for CGROUP_LAYOUT_NONE. */
const char *cgroup_layout_name(enum cgroup_layout l);

#endif
