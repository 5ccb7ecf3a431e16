/* aranges.h - which compile unit holds an address: a table of ranges,
 * read from the bytes of a .debug_aranges section read without needing .debug_info (libdw's
 * dwarf_getaranges refuses a table naming units beyond the part of a
 * lazily inflated .debug_info it has been given: dwarf_sections.h).
 * The bytes come from a file memprof does not trust: every read is bounded
 * by their length (fuzzed: fuzz/fuzz_aranges.c). */
#ifndef MEMPROF_SYM_ARANGES_H
#define MEMPROF_SYM_ARANGES_H

#include <stddef.h>
#include <stdint.h>

struct arange {
    uint64_t lo, hi;        /* [lo, hi) */
    uint64_t unit;          /* offset of its unit in .debug_info */
};

struct aranges {
    struct arange *v;       /* sorted by lo (once aranges_sort ran) */
    size_t n, cap;
};

/* Read the sets of a little-endian .debug_aranges (DWARF 2 to 5, 32- and
 * 64-bit, 4- and 8-byte addresses).  A set that cannot be read ends the
 * table (the sets before it are kept).  0, or -1 when out of memory. */
int aranges_read(const unsigned char *data, size_t len, struct aranges *out);
void aranges_free(struct aranges *a);

/* A table built by other means (dwarf.c indexes units by their ranges):
 * add [lo, hi) for unit (empty ranges are not kept), then sort once.
 * aranges_add: 0, or -1 when out of memory. */
int aranges_add(struct aranges *a, uint64_t lo, uint64_t hi, uint64_t unit);
void aranges_sort(struct aranges *a);

/* The unit whose ranges hold addr: 0 with *unit set, or -1 when none. */
int aranges_find(const struct aranges *a, uint64_t addr, uint64_t *unit);

#endif
