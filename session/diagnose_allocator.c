/* diagnose_allocator.c - the diagnoses of free memory an allocator keeps
 * resident (session/memory_diagnose.h): jemalloc's unpurged pages, glibc
 * malloc's free chunks in its arenas, tcmalloc's page heap.  Each reads
 * only the allocator's own figures, already read in one stop. */
#include "session/memory_diagnose.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define MIB(b) ((double)(b) / (1 << 20))

static uint64_t min_u64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

/* Why jemalloc has not purged them: its settings, when read. */
static void jemalloc_why(char *buf, size_t len, const struct diagnose_jemalloc_settings *set)
{
    if (!set)
        buf[0] = 0;
    else if (set->background_thread)
        snprintf(buf, len, "; background_thread is on: they go within dirty_decay_ms (%zd ms) "
                 "and muzzy_decay_ms (%zd ms)", set->dirty_decay_ms, set->muzzy_decay_ms);
    else if (set->dirty_decay_ms < 0)
        snprintf(buf, len, "; dirty_decay_ms is -1: jemalloc never purges them by itself");
    else
        snprintf(buf, len, "; background_thread is off: their decay (dirty_decay_ms %zd ms, "
                 "muzzy_decay_ms %zd ms) advances only when the program allocates or frees, "
                 "so an idle process keeps them", set->dirty_decay_ms, set->muzzy_decay_ms);
}

/* Dirty pages are resident; muzzy ones (MADV_FREE) only until the kernel
 * takes them, so no more of them than smaps' LazyFree counts. */
int diagnose_jemalloc_unpurged(const struct diagnose_input *in, struct memory_diagnoses *d)
{
    const struct jemalloc_summary *je = in->je;
    if (!je || !je->pages)
        return 0;
    uint64_t muzzy = in->rss ? min_u64(je->muzzy, in->rss->lazyfree) : 0;
    uint64_t bytes = je->dirty + muzzy;
    if (bytes < DIAGNOSE_MIN_BYTES)
        return 0;
    struct memory_diagnosis *g = diagnose_add(d, "jemalloc_unpurged", bytes);
    if (!g)
        return -1;
    char why[320];
    jemalloc_why(why, sizeof why, in->je_set);
    snprintf(g->cause, sizeof g->cause, "jemalloc keeps %.1f MiB of freed pages resident: "
             "%.1f MiB dirty (not purged) and %.1f MiB muzzy (purged lazily with MADV_FREE: "
             "counted in RSS as LazyFree until the kernel needs the memory%s)%s",
             MIB(bytes), MIB(je->dirty), MIB(muzzy),
             in->rss ? "" : "; smaps unread, so none counted", why);
    snprintf(g->remedy, sizeof g->remedy, "'purge' returns them now (about %.1f MiB: the dirty "
             "%.1f MiB and the muzzy %.1f MiB); 'decay 1000' (or MALLOC_CONF=dirty_decay_ms:1000)"
             " purges them sooner; MALLOC_CONF=background_thread:true purges them while the "
             "process idles", MIB(bytes), MIB(je->dirty), MIB(muzzy));
    return 0;
}

static int by_free(const void *x, const void *y)
{
    uint64_t a = glibc_arena_free_bytes(x), b = glibc_arena_free_bytes(y);
    return a < b ? 1 : a > b ? -1 : 0;
}

/* The arenas' free bytes, largest first, up to a few, into buf. */
static void arenas_list(char *buf, size_t len, const struct glibc_malloc_info *mi,
                        struct glibc_arena_info *sorted)
{
    enum { SHOWN = 6 };
    memcpy(sorted, mi->arenas, mi->narenas * sizeof *sorted);
    qsort(sorted, mi->narenas, sizeof *sorted, by_free);
    size_t at = 0;
    buf[0] = 0;
    for (size_t i = 0; i < mi->narenas && i < SHOWN && at < len; i++)
        at += (size_t)snprintf(buf + at, len - at, "%sarena %u %.1f MiB", i ? ", " : "",
                               sorted[i].nr, MIB(glibc_arena_free_bytes(&sorted[i])));
    if (mi->narenas > SHOWN && at < len)
        snprintf(buf + at, len - at, ", and %zu more", mi->narenas - SHOWN);
}

/* MALLOC_ARENA_MAX to suggest: the CPUs the process may use, no more than
 * its threads; 0 when the arenas are not more than that. */
static unsigned arena_max(const struct diagnose_input *in, size_t narenas)
{
    unsigned n = in->cpus;
    if (in->threads && in->threads < n)
        n = in->threads;
    return n && narenas > n ? n : 0;
}

int diagnose_glibc_arenas(const struct diagnose_input *in, struct memory_diagnoses *d)
{
    if (!in->other || !in->other->have_glibc || !in->other->glibc.narenas)
        return 0;
    const struct glibc_malloc_info *mi = &in->other->glibc;
    uint64_t free_bytes = 0;
    for (size_t i = 0; i < mi->narenas; i++) {
        uint64_t f = glibc_arena_free_bytes(&mi->arenas[i]);
        free_bytes = free_bytes + f < free_bytes ? UINT64_MAX : free_bytes + f;
    }
    /* Only what a remedy returns counts: free chunks in the bins (purge),
     * and the thread arenas' tops beyond the trim threshold's default (a
     * fixed threshold); a healthy server's arenas each keep a small top. */
    uint64_t tops = in->glibc_thread_tops < free_bytes ? in->glibc_thread_tops : free_bytes;
    uint64_t over = in->glibc_thread_tops_over < tops ? in->glibc_thread_tops_over : tops;
    if (free_bytes == UINT64_MAX || free_bytes - tops + over < DIAGNOSE_MIN_BYTES)
        return 0;
    struct glibc_arena_info *sorted = malloc(mi->narenas * sizeof *sorted);
    struct memory_diagnosis *g = sorted ? diagnose_add(d, "glibc_arenas_free", free_bytes) : NULL;
    if (!g) {
        free(sorted);
        return -1;
    }
    char list[400];
    arenas_list(list, sizeof list, mi, sorted);
    free(sorted);
    snprintf(g->cause, sizeof g->cause, "glibc malloc: %zu arena%s hold%s %.1f MiB in free "
             "chunks, kept for the program's next allocations (%s)", mi->narenas,
             mi->narenas == 1 ? "" : "s", mi->narenas == 1 ? "s" : "", MIB(free_bytes), list);
    unsigned max = arena_max(in, mi->narenas);
    char cap[200] = "";
    if (max)
        snprintf(cap, sizeof cap, "; MALLOC_ARENA_MAX=%u (the CPUs it may run on, at most its "
                 "threads; glibc allows 8 arenas per core) keeps fewer arenas, each with its "
                 "own free memory", max);
    char top_text[400] = "";
    if (tops >= DIAGNOSE_MIN_BYTES)
        snprintf(top_text, sizeof top_text, "; %.1f MiB are the free tops of %u thread arenas, "
                 "which malloc_trim leaves: glibc trims a thread arena's top only in free(), "
                 "when it is above M_TRIM_THRESHOLD, which it raises as mmapped chunks are "
                 "freed (up to 64 MiB): MALLOC_TRIM_THRESHOLD_=131072 at the next start keeps "
                 "it at 128 KiB (%.1f MiB of them are beyond that)", MIB(tops),
                 in->glibc_nthread_tops, MIB(over));
    snprintf(g->remedy, sizeof g->remedy, "'purge' (malloc_trim(0)) returns at most %.1f MiB "
             "(an upper bound: only the whole pages inside free chunks in its bins go back, "
             "and pages trimmed before are still counted free)%s%s", MIB(free_bytes - tops),
             top_text, cap);
    return 0;
}

static uint64_t figure(const struct allocator_stats *st, const char *key)
{
    for (size_t i = 0; i < st->nfig; i++)
        if (strcmp(st->fig[i].key, key) == 0)
            return st->fig[i].value;
    return UINT64_MAX;
}

int diagnose_tcmalloc(const struct diagnose_input *in, struct memory_diagnoses *d)
{
    if (!in->other || !in->tcmalloc)
        return 0;
    uint64_t bytes = figure(in->other, "tcmalloc.pageheap_free_bytes");
    if (bytes == UINT64_MAX || bytes < DIAGNOSE_MIN_BYTES)
        return 0;
    struct memory_diagnosis *g = diagnose_add(d, "tcmalloc_pageheap_free", bytes);
    if (!g)
        return -1;
    snprintf(g->cause, sizeof g->cause, "tcmalloc keeps %.1f MiB of free pages in its page "
             "heap, resident (tcmalloc.pageheap_free_bytes): it gives pages back only as the "
             "program frees more, never while it idles", MIB(bytes));
    snprintf(g->remedy, sizeof g->remedy, "'purge' (MallocExtension_ReleaseFreeMemory) returns "
             "about %.1f MiB now; TCMALLOC_RELEASE_RATE (default 1, higher releases more per "
             "free) only acts while the program frees", MIB(bytes));
    return 0;
}
