/* unwind_tables.h - where an object's unwind table lies in a live process:
 * its .eh_frame_hdr, found from the object's program headers and read from
 * the process's memory, described as libunwind's remote table.  libunwind-
 * ptrace's own lookup opens the object by its /proc/PID/maps path under
 * /proc/PID/root, which names nothing for a process that chroot()ed
 * (inside a container or not): its walks then fell back to frame pointers
 * and ended, as if at the stack's base, one or two frames in. */
#ifndef MEMPROF_UNWIND_TABLES_H
#define MEMPROF_UNWIND_TABLES_H

#include <libunwind.h>

#include "attach/mapped_object.h"
#include "attach/unwind_memory.h"

/* The table of o as di (UNW_INFO_FORMAT_REMOTE_TABLE over its text): 0,
 * or -1 when o has no .eh_frame_hdr, it cannot be read, or its encoding is
 * not the binary-search table libunwind takes. */
int unwind_table_find(struct unwind_memory *mem, const struct mapped_object *o,
                      unw_dyn_info_t *di);

/* The header's fields, from its first bytes (pure, for unit tests): the
 * table's offset from the header and its entry count.  0, or -1 when it
 * is not a version-1 header with a sorted datarel/sdata4 table and a
 * 4-byte count. */
int unwind_table_parse_header(const unsigned char *hdr, size_t len, size_t *table_off,
                              uint64_t *count);

#endif
