/* debug_file.h - finding an object's separate debug file (the way gdb and
 * elfutils do): by build-id under a run directory's kept copies and
 * <debug_dir>/.build-id/, then by
 * .gnu_debuglink next to the object, in its .debug/ subdirectory and under
 * <debug_dir>/<object's directory>/, and last, when DEBUGINFOD_URLS is
 * set, from the debuginfod servers by build-id (lib/symbolize/debuginfod.h).  A
 * candidate counts only when its build-id (or, lacking build-ids, the
 * debuglink CRC-32) matches, a downloaded one too. */
#ifndef MEMPROF_SYM_DEBUG_H
#define MEMPROF_SYM_DEBUG_H

#include <stdio.h>

#include "lib/elf/elf_object.h"

#define SYM_DEBUG_DEFAULT_DIR "/usr/lib/debug"

struct sym_debug_search {
    const struct elf_object *obj;  /* the object (its build-id and debuglink) */
    const char *opened_path;       /* the object's file as opened (with root) */
    const char *path_in_root;      /* the same path without the root prefix */
    const char *root;              /* NULL or "" for none */
    const char *debug_dir;         /* e.g. /usr/lib/debug */
    const char *kept_dir;          /* NULL, or a run directory whose
                                      .build-id/ keeps debug files too
                                      (looked in first) */
    char **remote_note;            /* NULL, or where a malloc'd sentence goes
                                      when debuginfod was asked and gave
                                      nothing (the caller warns with it) */
};

/* Open the matching debug file: returns its descriptor (the caller closes
 * it) and its malloc'd path in *path, or -1 and *path NULL.  Candidates
 * that exist but do not match are described in *mismatch (malloc'd, the
 * first one only) so that the caller can warn.  Candidates the target's
 * user may have placed (beside the object, under root) are opened without
 * following a final symlink, and only regular files count. */
int sym_debug_open(const struct sym_debug_search *q, char **path, char **mismatch);

/* "<debug_dir>/.build-id/xx/rest.debug" for the object's build-id
 * (malloc'd), or NULL when it has none: where its debug file belongs. */
char *sym_debug_build_id_path(const char *debug_dir, const struct elf_object *o);

#endif
