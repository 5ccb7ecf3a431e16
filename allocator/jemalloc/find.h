/* find.h - finding the copies of jemalloc in a live process by
 * their mallctl symbol (shared, LD_PRELOADed, or linked in statically with
 * any prefix), and saying what the process uses when there is none. */
#ifndef MEMPROF_JEMALLOC_FIND_H
#define MEMPROF_JEMALLOC_FIND_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "attach/mapped_object.h"
#include "attach/target.h"
#include "lib/base/error.h"

/* One copy of jemalloc found in the target. */
struct jemalloc_copy {
    char *object;              /* path of the ELF object holding it (as in maps) */
    char *prefix;              /* "" for plain mallctl, "je_", "_rjem_" ... */
    uint64_t mallctl;          /* runtime address of <prefix>mallctl */
    uint64_t malloc_stats_print; /* runtime address, 0 when absent */
    uint64_t text_start, text_end; /* runtime range of the object's code */
    bool dynamic;              /* found in .dynsym (else only in .symtab) */
    bool static_copy;          /* linked into the executable itself */
    char *symbols_from;        /* the debug file or --exe copy its symbols
                                * came from; NULL: the object's own */
};

/* Does name match ^(.*_)?mallctl$?  On a match, the part before "mallctl"
 * goes to prefix (cap bytes, NUL-terminated) and true is returned. */
bool jemalloc_mallctl_name(const char *name, char *prefix, size_t cap);

/* Is sym a jemalloc mallctl of obj: a defined function with a matching
 * name and a defined sibling <prefix>mallctlnametomib? */
bool jemalloc_is_mallctl(const struct elf_object *obj, const struct elf_symbol *sym,
                         char *prefix, size_t cap);

/* Every copy of jemalloc in the objects, verified against the process's
 * memory.  Stripped objects that carry jemalloc's strings get the symbols
 * of their separate debug file (under opts->debug_dir, or beside them by
 * .gnu_debuglink), and the executable those of opts->exe once its build-id
 * matches (objs records them).  Returns the count, 0 when the process
 * holds no jemalloc, or -1 with err when it holds one memprof must not or
 * cannot call: its code differs from its file, or it is stripped (err
 * names the debug file it needs). */
int jemalloc_find(pid_t pid, struct mapped_objects *objs, const struct target_options *opts,
                  struct jemalloc_copy **copies, struct mp_error *err);

struct addr_range {
    uint64_t start, end;
};

/* Runtime code ranges of the jemalloc copies linked into object o (static
 * copies): *out is malloc'd, the count is returned. */
size_t jemalloc_static_ranges(const struct mapped_object *o, struct addr_range **out);

void jemalloc_copies_free(struct jemalloc_copy *copies, size_t n);

#endif
