/* cgroup_memory.h - a process's cgroup memory figures, read from the
 * host's /sys/fs/cgroup (lib/proc/cgroup_memory_dir.h finds the directory):
 * usage and limit, what of it is anonymous and page cache, the events
 * (OOMs, OOM kills, limit hits) and memory pressure (PSI), on cgroup v2
 * and v1 alike, under one set of names.  Each file is opened beneath the
 * cgroup's directory without following links, read bounded, and parsed
 * by lib/proc/procmem.c. */
#ifndef MEMPROF_CGROUP_MEMORY_H
#define MEMPROF_CGROUP_MEMORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/proc/cgroup_memory_dir.h"
#include "lib/proc/procmem.h"

/* Every count is CGROUP_ABSENT when its file (or key) is not there: v1
 * has no memory.high nor oom events, v2's root cgroup no memory.current. */
#define CGROUP_ABSENT UINT64_MAX

struct cgroup_memory {
    struct cgroup_memory_where where;
    uint64_t current;              /* memory.current; v1 memory.usage_in_bytes */
    uint64_t max, high;            /* memory.max, memory.high; v1 limit_in_bytes */
    bool max_unlimited, high_unlimited;
    uint64_t anon, file;           /* memory.stat anon, file; v1 total_rss, total_cache */
    /* memory.events; v1: oom_kill and under_oom of memory.oom_control, and
     * memory.failcnt as the max events (usage reached the limit) */
    uint64_t ev_low, ev_high, ev_max, ev_oom, ev_oom_kill, ev_oom_group_kill, under_oom;
    bool has_pressure;             /* memory.pressure of where.pressure */
    bool has_full;
    struct procmem_psi some, full;
};

/* The figures of the cgroup of the process whose /proc/PID/cgroup text
 * this is.  0, or -1 with why (a sentence) when the cgroup's directory
 * cannot be found or holds no memory figures. */
int cgroup_memory_read(const char *cgroup_text, size_t len, struct cgroup_memory *out,
                       char *why, size_t whylen);

/* The figures from the cgroup's directories, already found (out->where:
 * its version says which files) and opened: memfd the memory files',
 * pressurefd v2's memory.pressure's (-1: none), topfd the top of a v2
 * memory directory's hierarchy (-1: none), whose cgroup.controllers says
 * whether it has the memory controller at all.  cgroup_memory_read's
 * second half, apart so that a fixture tree of either layout (tests/
 * fixtures/cgroup/) stands in for /sys/fs/cgroup.  Every file is
 * untrusted: a missing, unreadable, non-regular or malformed one leaves
 * its figures CGROUP_ABSENT.  0, or -1 with why when there is no usage. */
int cgroup_memory_read_dirs(struct cgroup_memory *out, int memfd, int pressurefd, int topfd,
                            char *why, size_t whylen);

/* What is left below the limit (max - current, 0 when over), or
 * CGROUP_ABSENT when there is no limit or no usage. */
uint64_t cgroup_memory_headroom(const struct cgroup_memory *c);

/* The OOM kills of the whole host since boot (/proc/vmstat oom_kill), or
 * CGROUP_ABSENT when the kernel does not count them. */
uint64_t cgroup_host_oom_kills(void);

#endif
