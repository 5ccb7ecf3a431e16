/* sym_table.h - the symbolizer's private containers: a set of interned
 * strings (equal contents, equal pointers) and an open-addressing map from
 * 64-bit keys to 64-bit values.  Both grow by doubling; lookups never
 * allocate, which keeps the per-address hot path allocation-free. */
#ifndef MEMPROF_SYM_TABLE_H
#define MEMPROF_SYM_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sym_u64map_slot {
    uint64_t key;
    uint64_t val_plus1;   /* 0 marks an empty slot */
};

struct sym_u64map {
    struct sym_u64map_slot *slots;
    size_t cap, n;        /* cap is 0 or a power of two */
};

/* Returns true and sets *val when key is present. */
bool sym_u64map_get(const struct sym_u64map *m, uint64_t key, uint64_t *val);
/* Inserts or replaces.  Returns 0, or -1 when out of memory. */
int sym_u64map_put(struct sym_u64map *m, uint64_t key, uint64_t val);
void sym_u64map_free(struct sym_u64map *m);

struct sym_interner;

struct sym_interner *sym_interner_new(void);
void sym_interner_free(struct sym_interner *in);
/* The interned copy of str (NULL stays NULL; NULL when out of memory). */
const char *sym_intern(struct sym_interner *in, const char *str);
const char *sym_intern_len(struct sym_interner *in, const char *str, size_t len);

#endif
