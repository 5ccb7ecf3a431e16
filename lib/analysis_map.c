/* analysis_map.c - the small hash map (64-bit key to 32-bit value) the
 * reports use to find a (caller, callee) pair or a tree child in O(1). */
#include "lib/analysis_internal.h"

#include <stdlib.h>
#include <string.h>

#define EMPTY UINT32_MAX

static int map_grow(struct analysis_map *m)
{
    size_t cap = m->cap ? m->cap * 2 : 1024;
    uint64_t *keys = malloc(cap * sizeof *keys);
    uint32_t *vals = malloc(cap * sizeof *vals);
    if (!keys || !vals) {
        free(keys);
        free(vals);
        return -1;
    }
    memset(vals, 0xff, cap * sizeof *vals);
    for (size_t i = 0; i < m->cap; i++) {
        if (m->vals[i] == EMPTY)
            continue;
        size_t j = analysis_mix(m->keys[i]) & (cap - 1);
        while (vals[j] != EMPTY)
            j = (j + 1) & (cap - 1);
        keys[j] = m->keys[i];
        vals[j] = m->vals[i];
    }
    free(m->keys);
    free(m->vals);
    m->keys = keys;
    m->vals = vals;
    m->cap = cap;
    return 0;
}

uint32_t *analysis_map_slot(struct analysis_map *m, uint64_t key)
{
    if ((m->n + 1) * 2 > m->cap && map_grow(m) < 0)
        return NULL;
    size_t mask = m->cap - 1;
    size_t j = analysis_mix(key) & mask;
    for (; m->vals[j] != EMPTY; j = (j + 1) & mask)
        if (m->keys[j] == key)
            return &m->vals[j];
    m->keys[j] = key;
    m->vals[j] = EMPTY - 1;
    m->n++;
    return &m->vals[j];
}

void analysis_map_free(struct analysis_map *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}
