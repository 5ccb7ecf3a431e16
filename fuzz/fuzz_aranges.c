/* fuzz_aranges.c - libFuzzer harness for the .debug_aranges reader: any
 * bytes give a table of non-empty ranges sorted by start (or fail only
 * out of memory), and every lookup answers a unit of the table. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/symbolize/aranges.h"

static void check(const struct aranges *a)
{
    for (size_t i = 0; i < a->n; i++) {
        if (a->v[i].lo >= a->v[i].hi || (i && a->v[i - 1].lo > a->v[i].lo))
            abort();
        uint64_t unit;
        if (aranges_find(a, a->v[i].lo, &unit) != 0)
            abort();    /* a range's first address is always found */
        if (aranges_find(a, a->v[i].hi - 1, &unit) == 0) {
            size_t j = 0;
            while (j < a->n && a->v[j].unit != unit)
                j++;
            if (j == a->n)
                abort();
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* exactly size bytes, so ASan catches any read past the end */
    unsigned char *copy = malloc(size ? size : 1);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    struct aranges a;
    if (aranges_read(copy, size, &a) == 0) {
        check(&a);
        aranges_free(&a);
    }
    free(copy);
    return 0;
}
