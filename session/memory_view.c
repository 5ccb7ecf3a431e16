/* memory_view.c - see session/memory_view.h. */
#include "session/memory_view.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/proc/procmem.h"
#include "session/diagnose_read.h"
#include "session/process_files.h"
#include "session/say.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The mappings of one read of smaps (malloc'd, *n of them), NULL when it
 * cannot be read. */
static struct rss_mapping *maps_now(struct session *s, size_t *n)
{
    size_t len;
    char *text = process_file(s, "smaps", &len);
    struct rss_account r;
    int rc = text ? rss_account_smaps(text, len, NULL, 0, &r) : -1;
    free(text);
    if (rc < 0)
        return NULL;
    struct rss_mapping *v = r.maps;
    *n = r.nmaps;
    r.maps = NULL;
    rss_account_free(&r);
    return v;
}

/* This read's mappings become the session's previous read. */
static void keep_maps(struct session *s, const struct memory_account *a, double at)
{
    struct rss_mapping *copy = a->rss.nmaps ? malloc(a->rss.nmaps * sizeof *copy) : NULL;
    free(s->memory_prev);
    s->memory_prev = copy;
    s->memory_prev_n = copy ? a->rss.nmaps : 0;
    s->memory_prev_pid = target_pid(s->target);
    s->memory_prev_at = at;
    if (copy)
        memcpy(copy, a->rss.maps, a->rss.nmaps * sizeof *copy);
}

/* The diagnoses, what grew measured against before (over the interval)
 * or else the session's previous read of this process. */
static void diagnose(struct session *s, struct memory_view *m, const struct rss_mapping *before,
                     size_t nbefore, double before_at)
{
    struct diagnose_input in;
    double at = now_s();
    diagnose_input_base(s, m->acct_ok ? &m->acct : NULL, &in);
    if (!before && s->memory_prev && s->memory_prev_pid == target_pid(s->target)) {
        before = s->memory_prev;
        nbefore = s->memory_prev_n;
        before_at = s->memory_prev_at;
    }
    if (m->acct_ok && before) {
        in.prev = before;
        in.nprev = nbefore;
        in.prev_seconds = at - before_at;
    }
    diagnose_input_allocator(s, &in,
                             s->alloc.kind == ALLOCATOR_JEMALLOC && m->je.stats ? &m->je : NULL,
                             m->je_set_ok ? &m->je_set : NULL,
                             m->have_other ? &m->other : NULL,
                             m->arenas_ok ? &m->arenas : NULL);
    in.cg = m->cgroup_ok ? &m->cg : NULL;
    m->diag_ok = memory_diagnose(&in, &m->diag) == 0;
    if (m->acct_ok)
        keep_maps(s, &m->acct, at);
}

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

/* The heap by arena, for the allocators that have figures of it (glibc's
 * measured from smaps, the one read of it). */
static int arenas_read(struct session *s, struct memory_view *m, const char *smaps,
                       size_t smaps_len)
{
    if (s->alloc.kind == ALLOCATOR_JEMALLOC)
        return heap_arenas_jemalloc(&m->arenas, &m->je, &m->je_arenas);
    if (!m->have_other)
        return -1;
    if (s->alloc.kind == ALLOCATOR_GLIBC)
        return heap_arenas_glibc(s, &m->arenas, &m->other, smaps, smaps_len);
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
    /* one read of smaps for the arenas and the categories: they agree */
    size_t smaps_len;
    char *smaps = process_file(s, "smaps", &smaps_len);
    m->arenas_ok = arenas_read(s, m, smaps, smaps_len) == 0;
    if (m->arenas_ok && m->arenas.measured)
        memory_heap_measured(&heap, heap.who, m->arenas.resident, m->arenas.in_use);
    if (m->arenas_ok) {
        heap.heap_starts = m->arenas.heap_starts;
        heap.nheap_starts = m->arenas.nheap_starts;
        heap.glibc_chunks = s->alloc.kind == ALLOCATOR_GLIBC;
    }
    m->acct_ok = memory_account_read(s, &heap, smaps, smaps_len, &m->acct, m->acct_why,
                                     sizeof m->acct_why) == 0;
    free(smaps);
}

void memory_view_free(struct memory_view *m)
{
    if (m->have_other)
        allocator_stats_free(&m->other);
    memory_account_free(&m->acct);
    memory_diagnoses_free(&m->diag);
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

/* jemalloc's summary with its purge settings in the same stop. */
static int jemalloc_read(struct session *s, struct memory_view *m)
{
    memory_diagnose_jemalloc_calls(&m->je_set);
    if (jemalloc_summary_read_detail(s, m->je_set.calls, DIAGNOSE_JEMALLOC_NCALLS, &m->je,
                                     &m->je_arenas))
        return -1;
    m->je_set_ok = true;
    for (size_t i = 0; i < DIAGNOSE_JEMALLOC_NCALLS; i++)
        m->je_set_ok = m->je_set_ok && m->je_set.calls[i].ret == 0;
    return 0;
}

/* Sleep the interval, then the fault counters again for their rates. */
static int fault_rates(struct session *s, double interval, struct memory_view *m)
{
    struct timespec ts = {(time_t)interval,
                          (long)((interval - (double)(time_t)interval) * 1e9)};
    if (nanosleep(&ts, NULL) != 0) {
        say_error("memory --interval: interrupted");
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
    return 0;
}

int memory_view_read(struct session *s, double interval, struct memory_view *m)
{
    memset(m, 0, sizeof *m);
    if (s->alloc.kind == ALLOCATOR_JEMALLOC ? jemalloc_read(s, m) : other_read(s, m))
        return -1;
    m->faults = proc_faults(s, &m->minflt, &m->majflt);
    struct rss_mapping *before = NULL;
    size_t nbefore = 0;
    double before_at = now_s();
    if (interval > 0) {
        before = maps_now(s, &nbefore);
        if (fault_rates(s, interval, m)) {
            free(before);
            memory_view_free(m);
            return -1;
        }
    }
    memory_read(s, m);
    if (!m->status && !m->rollup) {
        say_error("cannot read /proc/%d/status or smaps_rollup: is the process gone?",
                      (int)target_pid(s->target));
        free(before);
        memory_view_free(m);
        return -1;
    }
    diagnose(s, m, before, nbefore, before_at);
    free(before);
    return 0;
}
