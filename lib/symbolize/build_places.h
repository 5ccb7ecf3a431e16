/* build_places.h - where a file of one build may be, by its build-id, when
 * the file at an object's path is another build (a container's object read
 * on the host, a rebuild, an upgrade): the places the symbolizer tries, in
 * order, before debuginfod.  Pure: it only makes the paths. */
#ifndef MEMPROF_SYM_BUILD_PLACES_H
#define MEMPROF_SYM_BUILD_PLACES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sym_build_query {
    const char *build_id;   /* hex, as a dump records it */
    const char *kept_dir;   /* a saved run's directory (its .build-id/), or NULL */
    const char *debug_dir;  /* the host's, e.g. /usr/lib/debug */
    const char *root;       /* the live process's root, or NULL offline */
    int pid;                /* the live process, 0 offline */
    uint64_t start, end;    /* the mapping, for /proc/PID/map_files */
};

struct sym_build_place {
    char *path;             /* malloc'd */
    bool nofollow;          /* a final symlink there is not followed: the
                             * target's user or a copied directory put it */
    bool kept;              /* in the saved run (its debug file may be too) */
};

#define SYM_BUILD_PLACES_MAX 5

/* The places for q, in the order to try them: the run's kept copy
 * (KEPT/.build-id/xx/rest), the debug directory's object and debug file
 * (xx/rest, as Fedora links the object, then xx/rest.debug), and, live, the
 * very file mapped (/proc/PID/map_files/START-END) and the debug file in
 * the process's own debug directory (ROOT/DEBUG/.build-id/xx/rest.debug).
 * None for a build-id that is not even-length hex of 4 to 128 digits.
 * Fills out (SYM_BUILD_PLACES_MAX entries) and returns how many; looked
 * gets a description of where that is, for a message. */
size_t sym_build_places(const struct sym_build_query *q, struct sym_build_place *out,
                        char *looked, size_t looked_len);
void sym_build_places_free(struct sym_build_place *v, size_t n);

/* "/proc/PID/map_files/START-END" (malloc'd): the very inode mapped. */
char *sym_map_files_name(int pid, uint64_t start, uint64_t end);

#endif
