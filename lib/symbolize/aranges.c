/* aranges.c - the .debug_aranges reader and the address -> unit lookup
 * (aranges.h).  Each set: unit_length (4 bytes, or 0xffffffff and 8),
 * version (2), debug_info_offset (4 or 8), address_size (1),
 * segment_selector_size (1), padding to twice the address size, then
 * (address, length) pairs ended by (0, 0). */
#include "lib/symbolize/aranges.h"
#include "lib/base/array.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct cursor {
    const unsigned char *p, *end;
};

static bool take(struct cursor *c, size_t n, uint64_t *v)
{
    if ((size_t)(c->end - c->p) < n)
        return false;
    uint64_t x = 0;
    for (size_t i = 0; i < n; i++)
        x |= (uint64_t)c->p[i] << (8 * i);
    c->p += n;
    *v = x;
    return true;
}

int aranges_add(struct aranges *a, uint64_t lo, uint64_t hi, uint64_t unit)
{
    if (hi <= lo)
        return 0;   /* empty: holds nothing */
    if (array_reserve(&a->v, &a->cap, a->n + 1, sizeof *a->v, 64))
        return -1;
    a->v[a->n++] = (struct arange){lo, hi, unit};
    return 0;
}

/* The pairs of one set, within c; start is where the set began. */
static int read_pairs(struct cursor *c, const unsigned char *start, unsigned asize,
                      uint64_t unit, struct aranges *a)
{
    size_t used = (size_t)(c->p - start), align = 2 * asize;
    size_t pad = used % align ? align - used % align : 0;
    if (pad > (size_t)(c->end - c->p))
        return 0;
    c->p += pad;
    uint64_t lo, len;
    while (take(c, asize, &lo) && take(c, asize, &len)) {
        if (lo == 0 && len == 0)
            break;
        if (lo + len >= lo && aranges_add(a, lo, lo + len, unit))
            return -1;   /* (a wrapping range holds nothing) */
    }
    return 0;
}

/* One set at c->p; false when it cannot be read (the table ends). */
static bool read_set(struct cursor *c, struct aranges *a, int *rc)
{
    const unsigned char *start = c->p;
    uint64_t len, version, unit, asize, ssize;
    size_t offsize = 4;
    if (!take(c, 4, &len))
        return false;
    if (len == 0xffffffffu) {
        offsize = 8;
        if (!take(c, 8, &len))
            return false;
    } else if (len >= 0xfffffff0u) {
        return false;
    }
    if (len > (size_t)(c->end - c->p))
        return false;
    struct cursor set = {c->p, c->p + len};
    c->p += len;
    if (!take(&set, 2, &version) || version < 2 || version > 5 ||
        !take(&set, offsize, &unit) || !take(&set, 1, &asize) || !take(&set, 1, &ssize) ||
        (asize != 4 && asize != 8) || ssize != 0)
        return true;   /* a set we do not read: skipped whole */
    *rc = read_pairs(&set, start, (unsigned)asize, unit, a);
    return *rc == 0;
}

static int cmp_lo(const void *x, const void *y)
{
    const struct arange *a = x, *b = y;
    return a->lo < b->lo ? -1 : a->lo > b->lo;
}

int aranges_read(const unsigned char *data, size_t len, struct aranges *out)
{
    memset(out, 0, sizeof *out);
    struct cursor c = {data, data + len};
    int rc = 0;
    while (c.p < c.end && read_set(&c, out, &rc))
        ;
    if (rc) {
        aranges_free(out);
        return -1;
    }
    aranges_sort(out);
    return 0;
}

void aranges_sort(struct aranges *a)
{
    if (a->n)
        qsort(a->v, a->n, sizeof *a->v, cmp_lo);
}

void aranges_free(struct aranges *a)
{
    free(a->v);
    a->v = NULL;
    a->n = a->cap = 0;
}

int aranges_find(const struct aranges *a, uint64_t addr, uint64_t *unit)
{
    size_t lo = 0, hi = a->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (a->v[mid].lo <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* Ranges may nest: look back a little from the last start <= addr. */
    for (size_t i = lo, steps = 0; i > 0 && steps < 16; i--, steps++) {
        if (addr < a->v[i - 1].hi) {
            *unit = a->v[i - 1].unit;
            return 0;
        }
    }
    return -1;
}
