/* own_dir.h - memprof's own private directories under $TMPDIR (a
 * session's dump spool, serve's profiling runs): made 0700, locked for as
 * long as the memprof that made them (or a worker it forked) lives, and
 * swept by the next memprof that makes one of the same kind when the one
 * that made it was killed before it could remove it. */
#ifndef MEMPROF_OWN_DIR_H
#define MEMPROF_OWN_DIR_H

#include "lib/base/error.h"

struct own_dir {
    char *path;     /* "$TMPDIR/<prefix>.XXXXXX", NULL when none */
    int fd;         /* the directory, holding its lock; -1 when none */
};

/* Make a new directory "<prefix>.XXXXXX" in $TMPDIR (or /tmp) and lock
 * it; first remove every directory of that prefix there which is memprof's
 * user's own, 0700, and no longer locked (its memprof is gone).  `what`
 * names its use in an error ("the session's dumps").  0, or -1 with err
 * set saying what to do. */
int own_dir_make(struct own_dir *d, const char *prefix, const char *what,
                 struct mp_error *err);

/* Remove the directory and what memprof put in it (files, and directories
 * of files), then release it.  A directory never made is left alone. */
void own_dir_remove(struct own_dir *d);

/* Remove the directory name of parent (AT_FDCWD: a path) and what is in
 * it, directories depth levels down, never following a link. */
void own_dir_remove_tree(int parent, const char *name, int depth);

#endif
