/* dwarf.h - source lines and inline chains from one file's DWARF
 * (libdw).  Opened lazily by the symbolizer, only for SYMBOLIZE_LINES. */
#ifndef MEMPROF_SYM_DWARF_H
#define MEMPROF_SYM_DWARF_H

#include <stdint.h>

#include "lib/base/error.h"

struct sym_dwarf;

/* One source-level frame.  Strings point into libdw's memory or into
 * scratch space of the sym_dwarf: valid until the next lookup; the
 * symbolizer interns them at once. */
struct sym_dwarf_frame {
    const char *name;   /* linkage (mangled) name when known, else
                         * DW_AT_name qualified by its namespaces/classes */
    const char *file;   /* NULL when unknown */
    int line;           /* 0 when unknown */
};

/* Opens path's DWARF, path resolved inside root when it lies under it
 * (safe_open_in_root; root NULL: none); with build_id_len > 0, only a file
 * of that build-id (the one whose symbols were read: the name may now
 * hold another file).  NULL with err set when it has none. */
struct sym_dwarf *sym_dwarf_open(const char *root, const char *path, const uint8_t *build_id,
                                 size_t build_id_len, struct mp_error *err);
void sym_dwarf_free(struct sym_dwarf *d);

/* Frames for link-time address vaddr, innermost inlined function first,
 * the containing (out-of-line) function last.  Returns how many (at most
 * max), 0 when no compile unit covers vaddr. */
int sym_dwarf_lookup(struct sym_dwarf *d, uint64_t vaddr,
                     struct sym_dwarf_frame *out, int max);

#endif
