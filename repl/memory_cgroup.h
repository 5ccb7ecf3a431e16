/* memory_cgroup.h - the cgroup part of the 'memory' command's answer
 * (memory_cgroup.c): lines and JSON. */
#ifndef MEMPROF_MEMORY_CGROUP_H
#define MEMPROF_MEMORY_CGROUP_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>

#include "lib/proc/cgroup_memory.h"

struct memory_cgroup_view {
    const struct cgroup_memory *cg;
    bool ok;                   /* else why says what is unknown */
    const char *why;
    uint64_t host_oom_kills;   /* CGROUP_ABSENT when unknown */
};

void memory_cgroup_json(json_object *o, const struct memory_cgroup_view *v);

/* rss: the process's, set against the limit. */
void memory_cgroup_text(FILE *o, const struct memory_cgroup_view *v, uint64_t rss);

#endif
