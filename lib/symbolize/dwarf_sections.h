/* dwarf_sections.h - how much of a debug file's DWARF libdw is given.
 *
 * libdw inflates every compressed .debug_* section of a file as it opens
 * it (Debian's libc6-dbg: 10 MB, most of a small profile's analysis time),
 * though a lookup reads one compile unit.  Before libdw opens the file,
 * dwarf_sections_prepare hides the sections no lookup reads (location
 * lists, macros) and takes over a zlib-compressed .debug_info, and with
 * it a compressed .debug_abbrev and .debug_line, which are then inflated
 * only as far as the units asked for so far (sections inflate from their
 * start: units early in the file cost little): the unit a lookup needs is
 * made readable with dwarf_sections_need_unit (its entries and their
 * abbreviations) and dwarf_sections_need_line (its line table), after
 * which libdw must be opened again on the same Elf to see them (libdw
 * keeps the other sections it inflated: .debug_str and the like, small).
 * The other compressed .debug_* sections libdw reads (.debug_str,
 * .debug_rnglists, ...) are inflated whole by memprof, faster than libdw
 * would (dwarf_sections.c says how).  Files whose .debug_info is not
 * compressed are left as they are. */
#ifndef MEMPROF_SYM_DWARF_SECTIONS_H
#define MEMPROF_SYM_DWARF_SECTIONS_H

#include <libelf.h>
#include <stdbool.h>
#include <stdint.h>

struct dwarf_sections;

/* elf must have been opened with ELF_C_READ_MMAP_PRIVATE (section headers
 * are changed in memory, never in the file).  Returns the state of a
 * compressed .debug_info, or NULL when there is none to take over (or no
 * memory for it): libdw then reads the file its own way. */
struct dwarf_sections *dwarf_sections_prepare(Elf *elf);
void dwarf_sections_free(struct dwarf_sections *s);

/* Make the whole unit starting at offset off of .debug_info readable,
 * and its abbreviation table.  Returns 1 when more became readable
 * (reopen libdw), 0 when it already was, -1 when it cannot be (a corrupt
 * stream, unit header or table: the sections stay as far as they could be
 * inflated). */
int dwarf_sections_need_unit(struct dwarf_sections *s, uint64_t off);
/* Make the line table at offset off of .debug_line (a unit's
 * DW_AT_stmt_list) readable; same returns. */
int dwarf_sections_need_line(struct dwarf_sections *s, uint64_t off);
/* Make all of the three sections readable; same returns. */
int dwarf_sections_need_all(struct dwarf_sections *s);
/* The bytes of section name (inflated if compressed: libdw then finds it
 * so), or NULL when there is none. */
const unsigned char *dwarf_sections_bytes(Elf *elf, const char *name, size_t *len);
/* Whether all of the three is readable (nothing more to ask for). */
bool dwarf_sections_whole(const struct dwarf_sections *s);

#endif
