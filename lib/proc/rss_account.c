/* rss_account.c - see lib/proc/rss_account.h. */
#include "lib/proc/rss_account.h"
#include "lib/proc/maps.h"
#include "lib/proc/smaps_walk.h"
#include "lib/base/array.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One mapping as smaps gives it: its line, then its fields. */
struct mapping {
    struct map_entry e;
    uint64_t rss, swap, anon_huge, lazyfree;
};

static bool anonymous(const struct map_entry *e)
{
    return e->path[0] == 0 && e->inode == 0;
}

static bool starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Whether a sorted sp lies in [start, end). */
static bool holds_sp(const uint64_t *sps, size_t n, uint64_t start, uint64_t end)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {             /* the first sp >= start */
        size_t mid = lo + (hi - lo) / 2;
        if (sps[mid] < start)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && sps[lo] < end;
}

/* The sps in [start, end) not counted before (a hostile text may
 * repeat a range), marked in seen. */
static unsigned sps_in(const uint64_t *sps, bool *seen, size_t n, uint64_t start, uint64_t end)
{
    unsigned c = 0;
    for (size_t i = 0; i < n; i++)
        if (sps[i] >= start && sps[i] < end && !seen[i]) {
            seen[i] = true;
            c++;
        }
    return c;
}

/* Shared memory not backed by a regular file: shared anonymous
 * ("/dev/zero (deleted)"), POSIX (/dev/shm), SysV, memfd. */
static bool shared_memory(const struct map_entry *e)
{
    return e->shared && (e->path[0] == 0 || starts(e->path, "/dev/zero") ||
                         starts(e->path, "/dev/shm/") || starts(e->path, "/SYSV") ||
                         starts(e->path, "/memfd:"));
}

static int add_file(struct rss_account *a, const char *path, uint64_t rss)
{
    struct rss_file *f = NULL;
    if (a->nfiles && strncmp(a->files[a->nfiles - 1].path, path, sizeof f->path - 1) == 0)
        f = &a->files[a->nfiles - 1];       /* a file's mappings are together */
    for (size_t i = 0; !f && i < a->nfiles; i++)
        if (strncmp(a->files[i].path, path, sizeof f->path - 1) == 0)
            f = &a->files[i];
    if (!f) {
        if (array_reserve(&a->files, &a->capfiles, a->nfiles + 1, sizeof *a->files, 64) < 0)
            return -1;
        f = &a->files[a->nfiles++];
        memset(f, 0, sizeof *f);
        snprintf(f->path, sizeof f->path, "%s", path);
    }
    f->rss += rss;
    return 0;
}

/* Mappings known to hold the allocator's heap, by their start (sorted). */
struct heap_starts {
    const uint64_t *v;
    size_t n;
};

static bool heap_start(const struct heap_starts *h, uint64_t start)
{
    return h->n && bsearch(&start, h->v, h->n, sizeof *h->v, cmp_u64);
}

/* glibc's thread arenas are heaps of HEAP_MAX_SIZE (64 MiB on 64-bit
 * systems) aligned to it, mapped PROT_NONE and made writable from their
 * start as they grow: one arena's writable part often lies just above
 * another's PROT_NONE rest, laid out like a stack above its guard.  A
 * stack's writable part starts one guard above its mapping's start, so
 * never at such an alignment but by a 1 in 16384 chance. */
#define GLIBC_HEAP_ALIGN ((uint64_t)64 << 20)
static bool glibc_heap_start(uint64_t start)
{
    return (start & (GLIBC_HEAP_ALIGN - 1)) == 0;
}

/* Which part m goes to, prev the mapping before it (or NULL). */
static enum rss_part part_of(const struct mapping *m, const struct map_entry *prev,
                             const uint64_t *sps, bool *seen, size_t nsp,
                             const struct heap_starts *heaps, unsigned *stacks_seen)
{
    const struct map_entry *e = &m->e;
    bool guarded = prev && anonymous(prev) && !prev->r && !prev->w && !prev->x &&
                   prev->end == e->start;
    if (starts(e->path, "/memfd:memprof-sampler"))
        return RSS_PART_SAMPLER;
    if (strcmp(e->path, "[stack]") == 0)
        return RSS_PART_MAIN_STACK;
    if (anonymous(e) && !e->shared && heap_start(heaps, e->start))
        return RSS_PART_ANON;   /* a heap known to the allocator, whatever its layout */
    if (anonymous(e) && !e->shared && holds_sp(sps, nsp, e->start, e->end)) {
        *stacks_seen += sps_in(sps, seen, nsp, e->start, e->end);
        return RSS_PART_THREAD_STACK;
    }
    if (anonymous(e) && !e->shared && e->r && e->w && guarded && !glibc_heap_start(e->start))
        return RSS_PART_UNSEEN_STACK;
    if (shared_memory(e))
        return RSS_PART_SHARED;
    if (map_entry_is_file(e))
        return RSS_PART_FILE;
    if (anonymous(e) || strcmp(e->path, "[heap]") == 0 || starts(e->path, "[anon:"))
        return RSS_PART_ANON;
    return RSS_PART_OTHER;
}

static int keep_mapping(struct rss_account *a, const struct mapping *m, enum rss_part part,
                        const struct heap_starts *heaps)
{
    if (array_reserve(&a->maps, &a->capmaps, a->nmaps + 1, sizeof *a->maps, 256) < 0)
        return -1;
    struct rss_mapping *k = &a->maps[a->nmaps++];
    *k = (struct rss_mapping){.start = m->e.start, .end = m->e.end, .rss = m->rss,
                              .anon_huge = m->anon_huge, .part = part,
                              .brk = strcmp(m->e.path, "[heap]") == 0,
                              .heap = part == RSS_PART_ANON && heap_start(heaps, m->e.start)};
    snprintf(k->path, sizeof k->path, "%s", m->e.path);
    return 0;
}

/* The part of m, prev the mapping before it (or NULL). */
static int account(struct rss_account *a, const struct mapping *m, const struct map_entry *prev,
                   const uint64_t *sps, bool *seen, size_t nsp, const struct heap_starts *heaps)
{
    a->rss += m->rss;
    a->swap += m->swap;
    a->anon_huge += m->anon_huge;
    a->lazyfree += m->lazyfree;
    enum rss_part part = part_of(m, prev, sps, seen, nsp, heaps, &a->stacks_seen);
    uint64_t *to[] = {
        [RSS_PART_SAMPLER] = &a->sampler, [RSS_PART_MAIN_STACK] = &a->main_stack,
        [RSS_PART_THREAD_STACK] = &a->thread_stacks, [RSS_PART_UNSEEN_STACK] = &a->unseen_stacks,
        [RSS_PART_ANON] = &a->anon, [RSS_PART_SHARED] = &a->shared, [RSS_PART_OTHER] = &a->other,
    };
    if (keep_mapping(a, m, part, heaps) < 0)
        return -1;
    if (part == RSS_PART_FILE)
        return add_file(a, m->e.path, m->rss);
    *to[part] += m->rss;
    return 0;
}

/* "Key:   N kB" at p (a line of [p, end)): N in bytes into *v. */
static bool kb_field(const char *p, const char *end, const char *key, uint64_t *v)
{
    size_t k = strlen(key);
    if ((size_t)(end - p) <= k || memcmp(p, key, k) != 0)
        return false;
    p += k;
    while (p < end && *p == ' ')
        p++;
    uint64_t n = 0;
    bool digits = false;
    for (; p < end && *p >= '0' && *p <= '9'; p++, digits = true) {
        if (n > (UINT64_MAX / 1024 - 9) / 10)
            return false;
        n = n * 10 + (uint64_t)(*p - '0');
    }
    if (!digits)
        return false;
    *v += n * 1024;
    return true;
}

static void fields(struct mapping *m, const char *p, const char *e)
{
    if (!kb_field(p, e, "Rss:", &m->rss) && !kb_field(p, e, "Swap:", &m->swap) &&
        !kb_field(p, e, "AnonHugePages:", &m->anon_huge))
        kb_field(p, e, "LazyFree:", &m->lazyfree);
}

int rss_account_smaps(const char *text, size_t len, const uint64_t *sps, size_t nsp,
                      struct rss_account *out)
{
    return rss_account_smaps_heaps(text, len, sps, nsp, NULL, 0, out);
}

static uint64_t *sorted_copy(const uint64_t *v, size_t n)
{
    uint64_t *c = n ? malloc(n * sizeof *c) : NULL;
    if (c) {
        memcpy(c, v, n * sizeof *c);
        qsort(c, n, sizeof *c, cmp_u64);
    }
    return c;
}

/* The walk's state: the mapping whose fields are being read, the one
 * before it, and what accounting needs. */
struct walk {
    struct rss_account *out;
    const uint64_t *sps;
    bool *seen;
    size_t nsp;
    const struct heap_starts *heaps;
    struct mapping cur;
    struct map_entry prev;
    bool have_cur, have_prev;
};

static int on_map(struct map_entry *e, void *arg)
{
    struct walk *w = arg;
    int rc = 0;
    if (w->have_cur) {
        rc = account(w->out, &w->cur, w->have_prev ? &w->prev : NULL, w->sps, w->seen, w->nsp,
                     w->heaps);
        free(w->prev.path);
        w->prev = w->cur.e;
        w->have_prev = true;
    }
    memset(&w->cur, 0, sizeof w->cur);
    w->cur.e = *e;
    w->have_cur = true;
    return rc;
}

static int on_field(const char *p, const char *e, void *arg)
{
    fields(&((struct walk *)arg)->cur, p, e);
    return 0;
}

int rss_account_smaps_heaps(const char *text, size_t len, const uint64_t *sps, size_t nsp,
                            const uint64_t *heaps, size_t nheaps, struct rss_account *out)
{
    memset(out, 0, sizeof *out);
    uint64_t *sorted = sorted_copy(sps, nsp);
    struct heap_starts hs = {sorted_copy(heaps, nheaps), nheaps};
    bool *seen = nsp ? calloc(nsp, sizeof *seen) : NULL;
    if ((nsp && (!sorted || !seen)) || (nheaps && !hs.v)) {
        free(sorted);
        free(seen);
        free((void *)hs.v);
        return -1;
    }
    struct walk w = {.out = out, .sps = sorted, .seen = seen, .nsp = nsp, .heaps = &hs};
    int rc = smaps_walk(text, len, on_map, on_field, &w);
    if (w.have_cur && rc == 0)
        rc = account(out, &w.cur, w.have_prev ? &w.prev : NULL, sorted, seen, nsp, &hs);
    if (w.have_cur)
        free(w.cur.e.path);
    if (w.have_prev)
        free(w.prev.path);
    free(sorted);
    free(seen);
    free((void *)hs.v);
    if (rc)
        rss_account_free(out);
    return rc;
}

void rss_account_free(struct rss_account *a)
{
    free(a->files);
    a->files = NULL;
    a->nfiles = a->capfiles = 0;
    free(a->maps);
    a->maps = NULL;
    a->nmaps = a->capmaps = 0;
}

int rss_syscall_sp(const char *text, size_t len, uint64_t *sp)
{
    /* The second-to-last of the fields, each a number ("-1", "0x...") */
    char buf[256];
    if (len == 0 || len >= sizeof buf)
        return 0;
    memcpy(buf, text, len);
    buf[len] = 0;
    char *words[10], *save = NULL;
    int n = 0;
    for (char *w = strtok_r(buf, " \n", &save); w; w = strtok_r(NULL, " \n", &save)) {
        if (n == 10)
            return 0;
        words[n++] = w;
    }
    if (n != 9 && n != 3)
        return 0;
    char *endp;
    unsigned long long v = strtoull(words[n - 2], &endp, 0);
    if (*endp || endp == words[n - 2] || words[n - 2][0] == '-' || v == 0)
        return 0;
    *sp = v;
    return 1;
}
