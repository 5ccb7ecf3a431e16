/* mapped_object.h - the executable ELF objects mapped into a live process:
 * each opened through /proc/PID/map_files (or /proc/PID/root) so that
 * containers and replaced files resolve to what the process really runs,
 * with its load bias and the runtime range of its code. */
#ifndef MEMPROF_MAPPED_OBJECT_H
#define MEMPROF_MAPPED_OBJECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/elf/elf_object.h"
#include "lib/base/error.h"
#include "lib/proc/maps.h"

struct mapped_object {
    char *path;                /* as /proc/PID/maps names it */
    struct elf_object *elf;
    uint64_t bias;             /* runtime = link-time + bias */
    uint64_t text_start, text_end; /* union of its executable mappings */
    bool is_exe;               /* the program itself (/proc/PID/exe) */
    /* Symbols for a stripped object, from its separate debug file or the
     * user's unstripped copy (--exe), checked to be the same build: same
     * link-time addresses, so they apply with this object's bias. */
    struct elf_object *debug_syms;
    char *debug_syms_path;
};

struct mapped_objects {
    struct mapped_object *v;
    size_t n;
};

/* Open every ELF object with an executable mapping.  Objects that cannot
 * be read are skipped; fails only when nothing can be read at all. */
int mapped_objects_load(pid_t pid, const struct map_list *maps,
                        struct mapped_objects *out, struct mp_error *err);
void mapped_objects_free(struct mapped_objects *objs);

/* The symbol table to search for o: its own, or the one of its debug file
 * when it has one. */
const struct elf_object *mapped_object_symbols(const struct mapped_object *o);

/* Function name defined in o (a FUNC or IFUNC symbol of its own table or
 * its debug file's), or NULL.  Its runtime address to call, or 0: an IFUNC
 * symbol's address is its resolver's, so only a plain FUNC has one. */
const struct elf_symbol *mapped_object_function(const struct mapped_object *o,
                                                const char *name);
uint64_t mapped_object_function_address(const struct mapped_object *o, const char *name);

/* The object whose code holds runtime address addr, or NULL. */
const struct mapped_object *mapped_objects_find(const struct mapped_objects *objs,
                                                uint64_t addr);
const struct mapped_object *mapped_objects_exe(const struct mapped_objects *objs);

/* The object whose file name starts with base ("libc.so"), or NULL. */
const struct mapped_object *mapped_objects_named(const struct mapped_objects *objs,
                                                 const char *base);

/* Runtime address -> file offset of the object's PT_LOAD holding it. */
int mapped_object_file_offset(const struct mapped_object *o, uint64_t addr,
                              uint64_t *offset);

/* Open the object's file again (map_files first, then root); -1 on error. */
int mapped_object_open_file(pid_t pid, const struct map_list *maps,
                            const char *path);

#endif
