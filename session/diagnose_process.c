/* diagnose_process.c - the diagnoses of the process's memory outside its
 * allocator's free lists (session/memory_diagnose.h): huge pages that made
 * untouched memory resident, exited threads' stacks glibc caches, a
 * mapping that grew between two reads, and the cgroup near its limit. */
#include "session/memory_diagnose.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define MIB(b) ((double)(b) / (1 << 20))

static const char thp_enabled[] = "/sys/kernel/mm/transparent_hugepage/enabled";

/* What to do about huge pages, by the host's mode. */
static void thp_remedy(char *buf, size_t len, const char *mode, uint64_t bytes)
{
    int n;
    if (mode && strcmp(mode, "always") == 0)
        n = snprintf(buf, len, "THP is 'always' on this host: 'echo madvise > %s' gives huge "
                     "pages only to memory a program asks for (madvise MADV_HUGEPAGE)",
                     thp_enabled);
    else if (mode && strcmp(mode, "madvise") == 0)
        n = snprintf(buf, len, "THP is 'madvise' on this host, so the program (or its "
                     "allocator) asks for huge pages with madvise(MADV_HUGEPAGE): not for "
                     "sparsely written memory; for jemalloc MALLOC_CONF=thp:never,"
                     "metadata_thp:disabled; 'echo never > %s' stops them for every process",
                     thp_enabled);
    else
        n = snprintf(buf, len, "'echo madvise > %s' gives huge pages only to memory a program "
                     "asks for; for jemalloc MALLOC_CONF=thp:never,metadata_thp:disabled",
                     thp_enabled);
    if (n > 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, "; a lower /sys/kernel/mm/transparent_hugepage/"
                 "khugepaged/max_ptes_none (511 by default) keeps khugepaged from collapsing "
                 "sparse ranges; at most %.1f MiB would return (the kernel splits the pages "
                 "again and frees their zero-filled parts)", MIB(bytes));
}

int diagnose_thp(const struct diagnose_input *in, struct memory_diagnoses *d)
{
    const struct diagnose_thp *t = &in->thp;
    if (!t->known || t->zero < DIAGNOSE_MIN_BYTES)
        return 0;
    struct memory_diagnosis *g = diagnose_add(d, "thp_inflation", t->zero);
    if (!g)
        return -1;
    snprintf(g->cause, sizeof g->cause, "transparent huge pages: %.1f MiB of the %.1f MiB of "
             "huge pages (AnonHugePages) are 4 KiB pages holding only zeros, memory never "
             "written that a 2 MiB page made resident (%.1f MiB of %s read%s)",
             MIB(t->zero), MIB(t->huge), MIB(t->scanned), t->frames ? "huge pages" :
             "wholly resident 2 MiB blocks, at most AnonHugePages counted per mapping: "
             "pagemap gave no frame numbers to tell huge pages by",
             t->capped ? "; the scan's bound: the rest not counted" : "");
    thp_remedy(g->remedy, sizeof g->remedy, in->thp_mode, t->zero);
    return 0;
}

/* Only when every thread gave its stack pointer are the stack-like
 * mappings left over exited threads' stacks: a running thread's stack
 * would be among them otherwise. */
int diagnose_exited_stacks(const struct diagnose_input *in, struct memory_diagnoses *d)
{
    if (!in->rss || !in->threads || in->threads != in->threads_with_sp ||
        in->rss->unseen_stacks < DIAGNOSE_MIN_BYTES)
        return 0;
    uint64_t bytes = in->rss->unseen_stacks;
    struct memory_diagnosis *g = diagnose_add(d, "exited_thread_stacks", bytes);
    if (!g)
        return -1;
    snprintf(g->cause, sizeof g->cause, "stacks of exited threads: %.1f MiB in mappings laid "
             "out as thread stacks (above a guard page) that hold none of the stack pointers "
             "the process's %u live thread(s) gave: the stacks glibc keeps for new threads",
             MIB(bytes), in->threads);
    snprintf(g->remedy, sizeof g->remedy, "glibc caches exited threads' stacks for its next "
             "threads, up to 40 MiB of stack address space by default (nptl's "
             "stack_cache_maxsize), and keeps 16 KiB below where each thread ended resident; "
             "new threads reuse them; GLIBC_TUNABLES=glibc.pthread.stack_cache_size=BYTES "
             "(glibc >= 2.34) makes the cache smaller (up to %.1f MiB would return), a thread "
             "pool instead of a thread per task avoids it", MIB(bytes));
    return 0;
}

/* What m held at the previous read: the Rss of every mapping of prev
 * (sorted by start and not overlapping, as smaps gives them) with m's path
 * whose range overlaps m's.  By overlap, not by start: the kernel merges
 * a new anonymous mapping into its neighbour, so a mapping that grows by
 * mmap calls grows downwards and starts lower at each read. */
static uint64_t held_before(const struct rss_mapping *prev, size_t n,
                            const struct rss_mapping *m)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {                  /* the first that ends above m's start */
        size_t mid = lo + (hi - lo) / 2;
        if (prev[mid].end <= m->start)
            lo = mid + 1;
        else
            hi = mid;
    }
    uint64_t rss = 0;
    for (size_t i = lo; i < n && prev[i].start < m->end; i++)
        if (strcmp(prev[i].path, m->path) == 0)
            rss += prev[i].rss;
    return rss;
}

/* Heap, stacks and memprof's own region grow for reasons of their own,
 * told elsewhere. */
static bool growth_counts(const struct rss_mapping *m)
{
    return !m->brk && (m->part == RSS_PART_ANON || m->part == RSS_PART_FILE ||
                       m->part == RSS_PART_SHARED || m->part == RSS_PART_OTHER);
}

struct grown {
    const struct rss_mapping *now;
    uint64_t was, by;
};

static int by_growth(const void *x, const void *y)
{
    const struct grown *a = x, *b = y;
    return a->by < b->by ? 1 : a->by > b->by ? -1 : (a->now->start > b->now->start) -
                                                    (a->now->start < b->now->start);
}

static void growing_text(struct memory_diagnosis *g, const struct grown *w, double seconds,
                         const char *allocator)
{
    const struct rss_mapping *m = w->now;
    char when[64], what[320];
    if (seconds > 0)
        snprintf(when, sizeof when, "in %.1f s", seconds);
    else
        snprintf(when, sizeof when, "since the previous 'memory'");
    bool file = m->part == RSS_PART_FILE;
    if (m->path[0])
        snprintf(what, sizeof what, "%s %s", file ? "the file mapping" : "the mapping", m->path);
    else if (m->heap)
        snprintf(what, sizeof what, "a heap of one of %s's thread arenas",
                 allocator ? allocator : "the allocator");
    else
        snprintf(what, sizeof what, "the anonymous mapping");
    snprintf(g->cause, sizeof g->cause, "a growing mapping: %s (%#" PRIx64 "-%#" PRIx64 ") "
             "grew by %.1f MiB %s (Rss %.1f -> %.1f MiB)", what, m->start, m->end, MIB(w->by),
             when, MIB(w->was), MIB(m->rss));
    if (file)
        snprintf(g->remedy, sizeof g->remedy, "its pages are the file's page cache, mapped: "
                 "RSS counts every page touched through the mapping until it is unmapped "
                 "(clean pages go back under memory pressure); munmap or "
                 "madvise(MADV_DONTNEED) what the program is done with, or read the file "
                 "without mapping it");
    else if (m->heap)
        snprintf(g->remedy, sizeof g->remedy, "the allocator's heap: the program allocated "
                 "more there (held, or freed and kept by the arena: the arenas' free memory "
                 "is a diagnosis of its own when it counts); run 'memory' again to see "
                 "whether it goes on growing; 'prof on' then 'top' names the allocations");
    else
        snprintf(g->remedy, sizeof g->remedy, "anonymous memory the program (or its "
                 "allocator) mapped and keeps writing to: run 'memory' again to see whether "
                 "it goes on growing; 'faults SECONDS' then 'top' names the code that touches "
                 "its pages, and 'prof on' (beside jemalloc's own profiler: 'prof on "
                 "--mappings') then 'dump' and 'top' the code that maps it");
}

int diagnose_growing(const struct diagnose_input *in, struct memory_diagnoses *d)
{
    if (!in->rss || !in->prev)
        return 0;
    struct grown top[DIAGNOSE_GROWING_MAX + 1];
    size_t n = 0;
    for (size_t i = 0; i < in->rss->nmaps; i++) {
        const struct rss_mapping *m = &in->rss->maps[i];
        if (!growth_counts(m))
            continue;
        uint64_t was = held_before(in->prev, in->nprev, m);
        if (m->rss < was + DIAGNOSE_MIN_BYTES || m->rss <= was)
            continue;
        top[n++] = (struct grown){m, was, m->rss - was};
        qsort(top, n, sizeof *top, by_growth);
        if (n > DIAGNOSE_GROWING_MAX)
            n = DIAGNOSE_GROWING_MAX;
    }
    for (size_t i = 0; i < n; i++) {
        struct memory_diagnosis *g = diagnose_add(d, "growing_mapping", top[i].by);
        if (!g)
            return -1;
        growing_text(g, &top[i], in->prev_seconds, in->allocator);
    }
    return 0;
}

static bool counted(uint64_t v)
{
    return v != CGROUP_ABSENT && v > 0;
}

/* What memory.events says happened, into buf ("" when nothing). */
static void cgroup_events(char *buf, size_t len, const struct cgroup_memory *c)
{
    const struct { const char *name; uint64_t v; } ev[] = {
        {"max (usage hit the limit)", c->ev_max}, {"high (throttled)", c->ev_high},
        {"oom", c->ev_oom}, {"oom_kill", c->ev_oom_kill},
        {"oom_group_kill", c->ev_oom_group_kill},
    };
    size_t at = 0;
    buf[0] = 0;
    for (size_t i = 0; i < sizeof ev / sizeof *ev && at < len; i++)
        if (counted(ev[i].v))
            at += (size_t)snprintf(buf + at, len - at, "%s%s %" PRIu64, at ? ", " : "; events: ",
                                   ev[i].name, ev[i].v);
}

int diagnose_cgroup(const struct diagnose_input *in, struct memory_diagnoses *d)
{
    const struct cgroup_memory *c = in->cg;
    if (!c || c->max_unlimited || c->max == CGROUP_ABSENT || !c->max ||
        c->current == CGROUP_ABSENT)
        return 0;
    bool over = c->current >= c->max;
    uint64_t left = over ? c->current - c->max : c->max - c->current;
    bool events = counted(c->ev_max) || counted(c->ev_high) || counted(c->ev_oom_kill) ||
                  counted(c->under_oom);
    if (!over && !events && (double)left >= DIAGNOSE_CGROUP_NEAR * (double)c->max)
        return 0;
    struct memory_diagnosis *g = diagnose_add(d, "cgroup_near_limit", c->current);
    if (!g)
        return -1;
    char ev[320];
    cgroup_events(ev, sizeof ev, c);
    snprintf(g->cause, sizeof g->cause, "the cgroup %.320s is near its memory limit: usage %.1f MiB "
             "of %.1f MiB, %.1f MiB %s (%.0f %%)%s%s", c->where.memory.path[0] ?
             c->where.memory.path : "/", MIB(c->current), MIB(c->max), MIB(left),
             over ? "over it" : "left", 100.0 * (double)left / (double)c->max, ev,
             counted(c->under_oom) ? "; out of memory now, the OOM killer disabled" : "");
    snprintf(g->remedy, sizeof g->remedy, "at the limit (%.1f MiB) the kernel reclaims page "
             "cache, then OOM-kills a process of the cgroup%s: raise the limit (memory.max; "
             "systemd MemoryMax=, docker/podman run --memory, Kubernetes "
             "resources.limits.memory) or lower what its processes hold (the other diagnoses "
             "say what would return)", MIB(c->max),
             counted(c->ev_oom_kill) ? ", as it already did (oom_kill above)" : "");
    return 0;
}
