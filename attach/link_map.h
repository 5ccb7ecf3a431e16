/* link_map.h - the object whose definition of a function a live process's
 * calls resolve to, in the dynamic loader's own search order. */
#ifndef MEMPROF_LINK_MAP_H
#define MEMPROF_LINK_MAP_H

#include <sys/types.h>

#include "attach/mapped_object.h"

/* The object defining function name that the process's global lookups
 * reach: the executable's own definition first (a static program, or one
 * that defines it), else the first in the loader's link map.  Returns 0
 * with *out set (NULL: no object defines it), or -1 when the link map
 * cannot be read (no dynamic loader, or its memory is unreadable). */
int link_map_definer(pid_t pid, const struct mapped_objects *objs, const char *name,
                     const struct mapped_object **out);

#endif
