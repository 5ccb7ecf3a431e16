/* code_range.c - see code_range.h. */
#include "attach/code_range.h"

#include <stdlib.h>

#include "lib/base/array.h"

int code_ranges_add(struct code_ranges *r, uint64_t start, uint64_t end)
{
    if (array_reserve(&r->v, &r->cap, r->n + 1, sizeof *r->v, 8) < 0)
        return -1;
    r->v[r->n++] = (struct code_range){ start, end };
    return 0;
}

void code_ranges_free(struct code_ranges *r)
{
    free(r->v);
    r->v = NULL;
    r->n = r->cap = 0;
}
