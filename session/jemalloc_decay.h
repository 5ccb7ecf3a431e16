/* jemalloc_decay.h - 'decay' for jemalloc, below the front ends: every
 * initialized arena's dirty and muzzy decay times (and new arenas'
 * default, arenas.*), read, or set in one stop with the old times noted
 * so that the session can put them back (control_note_decay). */
#ifndef MEMPROF_JEMALLOC_DECAY_H
#define MEMPROF_JEMALLOC_DECAY_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "session/session.h"

struct jemalloc_decay_row {
    bool new_arenas;           /* the default of new arenas (arenas.*), else arena */
    size_t arena;
    ssize_t dirty_ms, muzzy_ms;   /* before any change */
};

struct jemalloc_decay {
    bool set;                  /* the times were set to want */
    ssize_t want[2];           /* dirty, muzzy */
    struct jemalloc_decay_row *rows;   /* malloc'd: initialized arenas, then new arenas */
    size_t n;
};

/* values[0..nvalues) (0 to 2: DIRTY_MS [MUZZY_MS], one value for both) as
 * the user typed them; none only reads.  0, or -1 with the error said. */
int jemalloc_decay_run(struct session *s, char **values, int nvalues, struct jemalloc_decay *d);
void jemalloc_decay_free(struct jemalloc_decay *d);

#endif
