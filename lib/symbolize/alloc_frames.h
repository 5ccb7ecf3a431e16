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

/* Is this (raw or demangled) function name an exact, listed entry point
 * into the allocator: the C allocation API alone or with a jemalloc
 * prefix (je_, _rjem_, *je_) or glibc's, operator new, Rust's
 * global-allocator shims, GlobalAlloc impls, alloc::alloc and
 * alloc::raw_vec?  A name alone never makes any other function the
 * allocator's; the symbolizer also marks every frame inside a libjemalloc*
 * object or a statically linked jemalloc copy's code (lib/symbolize/alloc_frames.c). */
bool symbol_is_allocator_name(const char *name);

#endif
