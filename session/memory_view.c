/* memory_view.c - see session/memory_view.h. */
#include "session/memory_view.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/proc/procmem.h"
#include "session/process_files.h"
#include "session/say.h"

static bool proc_faults(struct session *s, uint64_t *minflt, uint64_t *majflt)
{
    size_t len;
    char *text = process_file(s, "stat", &len);
    bool ok = text && procmem_stat_faults(text, len, minflt, majflt);
    free(text);
    return ok;
}

/* A number alone in a file (oom_score). */
static bool proc_number(struct session *s, const char *file, int64_t *v)
{
    size_t len;
    char *text = process_file(s, file, &len), *end;
    bool ok = false;
    if (text) {
        long long n = strtoll(text, &end, 10);
        ok = end != text && (*end == '\n' || *end == 0);
        *v = n;
    }
    free(text);
    return ok;
}

/* The heap by arena, for the allocators that have figures of it. */
static int arenas_read(struct session *s, struct memory_view *m)
{
    if (s->alloc.kind == ALLOCATOR_JEMALLOC)
        return heap_arenas_jemalloc(&m->arenas, &m->je, &m->je_arenas);
    if (!m->have_other)
        return -1;
    if (s->alloc.kind == ALLOCATOR_GLIBC)
        return heap_arenas_glibc(s, &m->arenas, &m->other);
    if (s->alloc.kind == ALLOCATOR_TCMALLOC || s->alloc.kind == ALLOCATOR_TCMALLOC_MINIMAL)
        return heap_arenas_tcmalloc(&m->arenas, &m->other);
    return -1;
}

static void memory_read(struct session *s, struct memory_view *m)
{
    size_t len;
    char *r = process_file(s, "smaps_rollup", &len);
    m->rollup = r && procmem_field(r, len, "Rss", &m->rss);
    if (m->rollup) {
        procmem_field(r, len, "Pss", &m->pss);
        procmem_field(r, len, "Pss_Anon", &m->pss_anon);
        procmem_field(r, len, "Pss_File", &m->pss_file);
        procmem_field(r, len, "Anonymous", &m->anon);
        procmem_field(r, len, "Swap", &m->swap);
    }
    free(r);
    char *st = process_file(s, "status", &len);
    m->status = st && procmem_field(st, len, "VmHWM", &m->hwm);
    if (m->status) {
        procmem_field(st, len, "RssAnon", &m->rss_anon);
        procmem_field(st, len, "RssFile", &m->rss_file);
        procmem_field(st, len, "RssShmem", &m->rss_shmem);
        if (!m->rollup) {
            procmem_field(st, len, "VmRSS", &m->rss);
            procmem_field(st, len, "VmSwap", &m->swap);
            m->anon = m->rss_anon;
        }
    }
    free(st);
    m->oom = proc_number(s, "oom_score", &m->oom_score) &&
             proc_number(s, "oom_score_adj", &m->oom_score_adj);
    m->cgroup_ok = process_cgroup_memory(s, &m->cg, m->cgroup_why,
                                         sizeof m->cgroup_why) == 0;
    m->host_oom_kills = cgroup_host_oom_kills();
    struct memory_heap heap = {.who = allocator_kind_name(s->alloc.kind), .total = UINT64_MAX};
    if (s->alloc.kind == ALLOCATOR_JEMALLOC && m->je.stats)
        memory_heap_jemalloc(&heap, m->je.resident, m->je.active);
    else if (m->have_other)
        memory_heap_other(&heap, heap.who, m->other.from_system, m->other.in_use);
    m->arenas_ok = arenas_read(s, m) == 0;
    if (m->arenas_ok && m->arenas.measured)
        memory_heap_measured(&heap, heap.who, m->arenas.resident, m->arenas.in_use);
    if (m->arenas_ok) {
        heap.heap_starts = m->arenas.heap_starts;
        heap.nheap_starts = m->arenas.nheap_starts;
    }
    m->acct_ok = memory_account_read(s, &heap, &m->acct, m->acct_why,
                                     sizeof m->acct_why) == 0;
}

void memory_view_free(struct memory_view *m)
{
    if (m->have_other)
        allocator_stats_free(&m->other);
    memory_account_free(&m->acct);
    heap_arenas_free(&m->arenas);
}

/* Another allocator's figures for 'memory': one that has none is said,
 * not an error. */
static int other_read(struct session *s, struct memory_view *m)
{
    if (!allocator_has_stats(s->alloc.kind)) {
        snprintf(m->other_why, sizeof m->other_why, "%s",
                 allocator_why_no_stats(s->alloc.kind));
        return 0;
    }
    struct mp_error err;
    if (allocator_stats(s->target, &s->alloc, &m->other, &err) < 0) {
        say_error("%s", err.msg);
        return -1;
    }
    m->have_other = true;
    return 0;
}

int memory_view_read(struct session *s, double interval, struct memory_view *m)
{
    memset(m, 0, sizeof *m);
    if (s->alloc.kind == ALLOCATOR_JEMALLOC ? jemalloc_summary_read_detail(s, &m->je, &m->je_arenas)
                                            : other_read(s, m))
        return -1;
    m->faults = proc_faults(s, &m->minflt, &m->majflt);
    if (interval > 0 && m->faults) {
        struct timespec ts = {(time_t)interval,
                              (long)((interval - (double)(time_t)interval) * 1e9)};
        if (nanosleep(&ts, NULL) != 0) {
            say_error("memory --interval: interrupted");
            memory_view_free(m);
            return -1;
        }
        uint64_t mi, ma;
        if (proc_faults(s, &mi, &ma)) {
            m->interval = interval;
            m->minflt_rate = (double)(mi > m->minflt ? mi - m->minflt : 0) / interval;
            m->majflt_rate = (double)(ma > m->majflt ? ma - m->majflt : 0) / interval;
            m->minflt = mi;
            m->majflt = ma;
        }
    }
    memory_read(s, m);
    if (!m->status && !m->rollup) {
        say_error("cannot read /proc/%d/status or smaps_rollup: is the process gone?",
                      (int)target_pid(s->target));
        memory_view_free(m);
        return -1;
    }
    return 0;
}
