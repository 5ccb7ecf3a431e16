/* fuzz_maps.c - libFuzzer harness for the /proc/PID/maps parser, strict and
 * not; a parsed list must be sorted and well formed. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/proc/maps.h"

static void check(const struct map_list *m)
{
    uint64_t reach = 0;     /* highest end among the entries before i */
    for (size_t i = 0; i < m->n; i++) {
        const struct map_entry *e = &m->v[i];
        if (!e->path || e->end < e->start)
            abort();
        if (i && m->v[i - 1].start > e->start)
            abort();
        /* Lookup is promised only where entries do not overlap, as the
         * kernel's never do (a hostile dump may). */
        bool alone = reach <= e->start && (i + 1 == m->n || e->end <= m->v[i + 1].start);
        if (alone && e->end > e->start && maps_find(m, e->start) != e)
            abort();
        if (e->end > reach)
            reach = e->end;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *copy = malloc(size ? size : 1);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    for (int strict = 0; strict < 2; strict++) {
        struct map_list m;
        struct mp_error err;
        if (maps_parse(copy, size, strict, &m, &err) == 0) {
            check(&m);
            maps_free(&m);
        }
    }
    free(copy);
    return 0;
}
