/* code_range.h - runtime address ranges of code in a live process, and
 * what to call them in a message: how an allocator tells the engine where
 * its code lies, so that no thread stopped inside it is borrowed (its
 * locks are not recursive: a call there would deadlock the process). */
#ifndef MEMPROF_CODE_RANGE_H
#define MEMPROF_CODE_RANGE_H

#include <stddef.h>
#include <stdint.h>

struct code_range {
    uint64_t start, end;       /* end excluded */
};

struct code_ranges {
    struct code_range *v;      /* malloc'd */
    size_t n, cap;
    char what[32];             /* "jemalloc": "inside jemalloc (pc ...)" */
};

/* Append [start, end): 0, or -1 out of memory. */
int code_ranges_add(struct code_ranges *r, uint64_t start, uint64_t end);
void code_ranges_free(struct code_ranges *r);

#endif
