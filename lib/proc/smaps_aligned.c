/* smaps_aligned.c - see lib/proc/smaps_aligned.h. */
#include "lib/proc/smaps_aligned.h"

#include <stdlib.h>
#include <string.h>

#include "lib/base/array.h"
#include "lib/proc/maps.h"
#include "lib/proc/procmem.h"

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

int smaps_aligned_read(const char *text, size_t len, uint64_t align, struct smaps_aligned *out)
{
    memset(out, 0, sizeof *out);
    if (!align || (align & (align - 1)))
        return 0;
    const char *end = text + len;
    struct map_entry cur = {0};
    enum kind k = OTHER;
    uint64_t rss = 0;
    bool have = false;
    int rc = 0;
    for (const char *p = text; p < end && rc == 0;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *e = nl ? nl : end;
        struct map_entry m;
        struct mp_error err;
        if (maps_parse_line(p, (size_t)(e - p), &m, &err) == 0) {
            if (have) {
                rc = take(out, &cur, k, rss);
                free(cur.path);
            }
            cur = m;
            k = kind_of(&cur, align);
            rss = 0;
            have = true;
        } else if (have) {
            procmem_field(p, (size_t)(e - p), "Rss", &rss);
        }
        p = nl ? nl + 1 : end;
    }
    if (have) {
        if (rc == 0)
            rc = take(out, &cur, k, rss);
        free(cur.path);
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
