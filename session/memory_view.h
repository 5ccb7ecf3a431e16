/* memory_view.h - the figures of the 'memory' command, read once for
 * whichever front end shows them: the kernel's (smaps_rollup, status,
 * stat's faults, oom_score), the allocator's own (jemalloc's summary in
 * one stop, or another allocator's statistics), the cgroup's
 * (process_cgroup_memory) and where RSS is (memory_account). */
#ifndef MEMPROF_MEMORY_VIEW_H
#define MEMPROF_MEMORY_VIEW_H

#include <stdbool.h>
#include <stdint.h>

#include "allocator/allocator.h"
#include "lib/proc/cgroup_memory.h"
#include "session/heap_arenas.h"
#include "session/jemalloc_summary.h"
#include "session/memory_account.h"
#include "session/memory_diagnose.h"
#include "session/session.h"

struct memory_view {
    uint64_t rss, pss, pss_anon, pss_file, anon, swap, hwm, rss_anon, rss_file, rss_shmem;
    bool rollup, status;
    uint64_t minflt, majflt;
    bool faults;
    double minflt_rate, majflt_rate, interval;
    int64_t oom_score, oom_score_adj;
    bool oom;
    struct jemalloc_summary je;
    struct jemalloc_arenas je_arenas; /* read in the summary's stop */
    struct allocator_stats other; /* another allocator's (have_other) */
    bool have_other;
    char other_why[1024];
    struct cgroup_memory cg;
    bool cgroup_ok;
    char cgroup_why[768];
    uint64_t host_oom_kills;      /* CGROUP_ABSENT when unknown */
    struct memory_account acct;   /* where RSS is (acct_ok) */
    bool acct_ok;
    char acct_why[256];
    struct heap_arenas arenas;    /* the heap arena by arena (arenas_ok) */
    bool arenas_ok;
    struct diagnose_jemalloc_settings je_set;  /* jemalloc's purge settings */
    bool je_set_ok;
    struct memory_diagnoses diag; /* why RSS is what it is (diag_ok) */
    bool diag_ok;
};

/* Everything, in this order: the allocator's figures, the fault counters
 * and the mappings (again after interval seconds when interval > 0, for
 * their rates and what grew), the kernel's files, the cgroup, where RSS
 * is, the heap by arena, then the diagnoses (what grew: over the interval, else since the
 * session's previous read, which this read then becomes).  0, or -1 with the error said
 * (say_error) and nothing to free. */
int memory_view_read(struct session *s, double interval, struct memory_view *m);
void memory_view_free(struct memory_view *m);

#endif
