/* u64map.h - an open-addressing hash map from a 64-bit key to a 32-bit
 * value: the one map the analysis reports and the pprof writer use to turn
 * addresses, (caller, callee) pairs and string ids into dense ids. */
#ifndef MEMPROF_U64MAP_H
#define MEMPROF_U64MAP_H

#include <stddef.h>
#include <stdint.h>

#define U64MAP_NEW (UINT32_MAX - 1)   /* the value of a slot just inserted */

struct u64map {
    uint64_t *keys;
    uint32_t *vals;            /* UINT32_MAX: empty slot */
    size_t cap, n;
};

/* The value slot for key, inserted holding U64MAP_NEW when new (the caller
 * stores its own value).  NULL when out of memory. */
uint32_t *u64map_slot(struct u64map *m, uint64_t key);
void u64map_free(struct u64map *m);

/* A 64-bit mixer (splitmix64's finaliser) for hashing keys; also used by
 * the symbolizer's own map (lib/symbolize/sym_table.c). */
uint64_t u64map_mix(uint64_t h);

#endif
