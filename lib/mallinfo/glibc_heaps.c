/* glibc_heaps.c - see lib/mallinfo/glibc_heaps.h. */
#include "lib/mallinfo/glibc_heaps.h"

#include <stdlib.h>
#include <string.h>

/* The heaps of one arena (one ar_ptr). */
struct group {
    uint64_t ar_ptr, size, rss;
    unsigned heaps;
    bool holds_arena;          /* one heap holds ar_ptr */
    bool taken;
};

static uint64_t add_capped(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static bool valid(const struct glibc_heap *h)
{
    return h->read && h->ar_ptr && h->size && h->end > h->start && h->size <= h->end - h->start;
}

static int by_ptr(const void *a, const void *b)
{
    const struct glibc_heap *x = *(const struct glibc_heap *const *)a,
                            *y = *(const struct glibc_heap *const *)b;
    return x->ar_ptr < y->ar_ptr ? -1 : x->ar_ptr > y->ar_ptr;
}

/* The starts of the heaps in v[0..nv) (sorted by ar_ptr) whose group
 * g[0..ng) (in the same order) holds its arena. */
static void heap_starts(const struct glibc_heap **v, size_t nv, const struct group *g,
                        size_t ng, struct glibc_heaps_result *out)
{
    size_t gi = 0;
    for (size_t i = 0; i < nv; i++) {
        while (gi < ng && g[gi].ar_ptr != v[i]->ar_ptr)
            gi++;
        if (gi < ng && g[gi].holds_arena)
            out->starts[out->nstarts++] = v[i]->start;
    }
}

/* The valid heaps, grouped by ar_ptr, into g (n of them at most), their
 * starts into out. */
static size_t group(const struct glibc_heap *h, size_t n, struct group *g,
                    struct glibc_heaps_result *out)
{
    const struct glibc_heap **v = malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return SIZE_MAX;
    size_t nv = 0, ng = 0;
    for (size_t i = 0; i < n; i++)
        if (valid(&h[i]))
            v[nv++] = &h[i];
    qsort(v, nv, sizeof *v, by_ptr);
    for (size_t i = 0; i < nv; i++) {
        if (!ng || g[ng - 1].ar_ptr != v[i]->ar_ptr)
            g[ng++] = (struct group){.ar_ptr = v[i]->ar_ptr};
        struct group *c = &g[ng - 1];
        c->size = add_capped(c->size, v[i]->size);
        c->rss = add_capped(c->rss, v[i]->rss);
        c->heaps++;
        c->holds_arena |= v[i]->ar_ptr >= v[i]->start && v[i]->ar_ptr < v[i]->end;
    }
    heap_starts(v, nv, g, ng, out);
    free(v);
    return ng;
}

static int group_by_size(const void *a, const void *b)
{
    const struct group *x = a, *y = b;
    if (x->size != y->size)
        return x->size < y->size ? -1 : 1;
    return x->ar_ptr < y->ar_ptr ? -1 : x->ar_ptr > y->ar_ptr;
}

/* Arena indices (1..) ordered by their system bytes, then by index. */
static int arena_by_size(const void *a, const void *b, void *arg)
{
    const struct glibc_malloc_info *mi = arg;
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    uint64_t x = mi->arenas[i].system_current, y = mi->arenas[j].system_current;
    return x != y ? (x < y ? -1 : 1) : (i < j ? -1 : i > j);
}

/* Walk both lists by size: an arena and a group of equal bytes are tied. */
static void tie(struct group *g, size_t ng, const size_t *idx, size_t nidx,
                const struct glibc_malloc_info *mi, struct glibc_heaps_result *out)
{
    size_t gi = 0;
    for (size_t k = 0; k < nidx; k++) {
        uint64_t want = mi->arenas[idx[k]].system_current;
        while (gi < ng && (!g[gi].holds_arena || g[gi].size < want))
            gi++;
        if (gi == ng)
            break;
        if (g[gi].size != want)
            continue;
        out->arena[idx[k]] = (struct glibc_arena_rss){true, g[gi].rss, g[gi].heaps};
        g[gi++].taken = true;
    }
    for (size_t i = 0; i < ng; i++)
        if (!g[i].taken && g[i].holds_arena) {
            out->unmatched++;
            out->unmatched_rss = add_capped(out->unmatched_rss, g[i].rss);
        }
}

int glibc_heaps_match(const struct glibc_heap *h, size_t n, const struct glibc_malloc_info *mi,
                      bool have_brk, uint64_t brk_rss, struct glibc_heaps_result *out)
{
    memset(out, 0, sizeof *out);
    out->arena = calloc(mi->narenas ? mi->narenas : 1, sizeof *out->arena);
    struct group *g = calloc(n ? n : 1, sizeof *g);
    size_t *idx = malloc((mi->narenas ? mi->narenas : 1) * sizeof *idx);
    out->starts = malloc((n ? n : 1) * sizeof *out->starts);
    size_t ng = g && out->starts ? group(h, n, g, out) : SIZE_MAX;
    int rc = -1;
    if (out->arena && idx && ng != SIZE_MAX) {
        if (mi->narenas && have_brk)
            out->arena[0] = (struct glibc_arena_rss){true, brk_rss, 0};
        size_t nidx = 0;
        for (size_t i = 1; i < mi->narenas; i++)
            idx[nidx++] = i;
        qsort_r(idx, nidx, sizeof *idx, arena_by_size, (void *)mi);
        qsort(g, ng, sizeof *g, group_by_size);
        tie(g, ng, idx, nidx, mi, out);
        rc = 0;
    }
    free(g);
    free(idx);
    if (rc)
        glibc_heaps_result_free(out);
    return rc;
}

void glibc_heaps_result_free(struct glibc_heaps_result *r)
{
    free(r->arena);
    free(r->starts);
    memset(r, 0, sizeof *r);
}
