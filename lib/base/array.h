/* array.h - the one helper for growable arrays (a pointer and a capacity
 * kept by the caller): room is made by doubling, so appends cost O(1)
 * amortized, and on failure the array is left as it was. */
#ifndef MEMPROF_ARRAY_H
#define MEMPROF_ARRAY_H

#include <stdint.h>
#include <stdlib.h>

/* Make room for need elements of elem bytes in *vp (a T **), whose
 * capacity is *cap; a first allocation holds at least first elements.
 * Returns 0, or -1 when out of memory. */
static inline int array_reserve(void *vp, size_t *cap, size_t need, size_t elem,
                                size_t first)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : first;
    while (n < need) {
        if (n > SIZE_MAX / 2 / elem)
            return -1;
        n *= 2;
    }
    void *grown = realloc(*(void **)vp, n * elem);
    if (!grown)
        return -1;
    *(void **)vp = grown;
    *cap = n;
    return 0;
}

#endif
