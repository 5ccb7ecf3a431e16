/* u64map.c - open-addressing hash map, 64-bit key to 32-bit value. */
#include "lib/base/u64map.h"

#include <stdlib.h>
#include <string.h>

#define EMPTY UINT32_MAX

uint64_t u64map_mix(uint64_t h)
{
    /* splitmix64's finaliser: pointers and addresses share low bits. */
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebULL;
    h ^= h >> 31;
    return h;
}


static int map_grow(struct u64map *m)
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
        size_t j = u64map_mix(m->keys[i]) & (cap - 1);
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

uint32_t *u64map_slot(struct u64map *m, uint64_t key)
{
    if ((m->n + 1) * 2 > m->cap && map_grow(m) < 0)
        return NULL;
    size_t mask = m->cap - 1;
    size_t j = u64map_mix(key) & mask;
    for (; m->vals[j] != EMPTY; j = (j + 1) & mask)
        if (m->keys[j] == key)
            return &m->vals[j];
    m->keys[j] = key;
    m->vals[j] = U64MAP_NEW;
    m->n++;
    return &m->vals[j];
}

void u64map_free(struct u64map *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}
