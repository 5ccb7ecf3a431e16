/* abbrev_end.h - where one abbreviation table of a .debug_abbrev ends,
 * read from as much of the section as has been inflated so far
 * (dwarf_sections.c inflates .debug_abbrev only as far as the tables of
 * the units looked up).  The bytes come from a file memprof does not
 * trust: every read is bounded by their length (fuzzed:
 * fuzz/fuzz_abbrev_end.c). */
#ifndef MEMPROF_SYM_ABBREV_END_H
#define MEMPROF_SYM_ABBREV_END_H

#include <stddef.h>

/* The table starting at off in data[0, len): 0 with *end one past its
 * terminating zero code, 1 when it runs past len (more of the section is
 * needed), -1 when it cannot be an abbreviation table. */
int abbrev_table_end(const unsigned char *data, size_t len, size_t off, size_t *end);

#endif
