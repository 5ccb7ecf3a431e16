/* smaps_aligned.c - see lib/proc/smaps_aligned.h. */
#include "lib/proc/smaps_aligned.h"

#include <stdlib.h>
#include <string.h>

#include "lib/base/array.h"
#include "lib/proc/maps.h"
#include "lib/proc/procmem.h"
#include "lib/proc/smaps_walk.h"

enum kind { OTHER, BRK, ALIGNED };

static enum kind kind_of(const struct map_entry *e, uint64_t align)
{
    if (strcmp(e->path, "[heap]") == 0)
        return BRK;
    if (e->path[0] == 0 && e->inode == 0 && !e->shared && e->r && e->w &&
        e->end > e->start && (e->start & (align - 1)) == 0)
        return ALIGNED;
    return OTHER;
}

/* The mapping just ended (its Rss read). */
static int take(struct smaps_aligned *a, const struct map_entry *e, enum kind k, uint64_t rss)
{
    if (k == BRK) {
        a->have_brk = true;
        a->brk_rss += rss;
        return 0;
    }
    if (k != ALIGNED)
        return 0;
    if (a->n >= SMAPS_ALIGNED_MAX) {
        a->cut = true;
        return 0;
    }
    if (array_reserve(&a->v, &a->cap, a->n + 1, sizeof *a->v, 16) < 0)
        return -1;
    a->v[a->n++] = (struct smaps_aligned_map){e->start, e->end, rss};
    return 0;
}

/* The walk's state: the mapping whose fields are being read. */
struct walk {
    struct smaps_aligned *out;
    uint64_t align;
    struct map_entry cur;
    enum kind k;
    uint64_t rss;
    bool have;
};

/* The mapping before e ends: taken; e is next. */
static int on_map(struct map_entry *e, void *arg)
{
    struct walk *w = arg;
    int rc = w->have ? take(w->out, &w->cur, w->k, w->rss) : 0;
    if (w->have)
        free(w->cur.path);
    w->cur = *e;
    w->k = kind_of(e, w->align);
    w->rss = 0;
    w->have = true;
    return rc;
}

static int on_field(const char *p, const char *e, void *arg)
{
    struct walk *w = arg;
    procmem_field(p, (size_t)(e - p), "Rss", &w->rss);
    return 0;
}

int smaps_aligned_read(const char *text, size_t len, uint64_t align, struct smaps_aligned *out)
{
    memset(out, 0, sizeof *out);
    if (!align || (align & (align - 1)))
        return 0;
    struct walk w = {.out = out, .align = align};
    int rc = smaps_walk(text, len, on_map, on_field, &w);
    if (w.have) {
        if (rc == 0)
            rc = take(out, &w.cur, w.k, w.rss);
        free(w.cur.path);
    }
    if (rc)
        smaps_aligned_free(out);
    return rc;
}

void smaps_aligned_free(struct smaps_aligned *a)
{
    free(a->v);
    memset(a, 0, sizeof *a);
}
