/* alloc_frames.h - where a jemalloc copy linked into a bigger object keeps its
 * code, for the symbolizer's allocator-frame rule (lib/symbolize/alloc_frames.c says
 * the whole rule; symbol_is_allocator_name, the listed entry points, is in
 * lib/symbolize/symbolize.h). */
#ifndef MEMPROF_SYM_ALLOC_H
#define MEMPROF_SYM_ALLOC_H

#include <stddef.h>
#include <stdint.h>

#include "lib/elf/elf_object.h"

struct sym_range {
    uint64_t start, end;   /* link-time addresses, end exclusive */
};

/* The link-time code ranges of the jemalloc copies in elf's symbol table:
 * one per defined function ^(.*_)?mallctl$ with a defined sibling
 * <prefix>mallctlnametomib (the rule attach/ uses to find copies).
 * *out is malloc'd (NULL when none); returns the count. */
size_t jemalloc_code_ranges(const struct elf_object *elf, struct sym_range **out);

#endif
