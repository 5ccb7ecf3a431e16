/* smaps_walk.h - the lines of an smaps text in turn, for the readers that
 * account its mappings (rss_account.c, smaps_aligned.c): each mapping's
 * line parsed as a maps line, then its field lines ("Rss:", "Swap:" ...),
 * which never parse as one.  Pure; the text may be cut or hostile. */
#ifndef MEMPROF_SMAPS_WALK_H
#define MEMPROF_SMAPS_WALK_H

#include <stddef.h>

#include "lib/proc/maps.h"

/* on_map gets each mapping (and owns e->path); on_field each field line
 * [p, e) after the first mapping.  A callback's nonzero answer ends the
 * walk and is returned; else 0. */
int smaps_walk(const char *text, size_t len, int (*on_map)(struct map_entry *e, void *arg),
               int (*on_field)(const char *p, const char *e, void *arg), void *arg);

#endif
