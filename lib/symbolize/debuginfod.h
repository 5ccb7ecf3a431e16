/* debuginfod.h - fetching a debug file by build-id from the debuginfod
 * servers in DEBUGINFOD_URLS (elfutils' libdebuginfod, with its cache under
 * DEBUGINFOD_CACHE_PATH), the last resort of sym_debug_open. */
#ifndef MEMPROF_SYM_DEBUGINFOD_H
#define MEMPROF_SYM_DEBUGINFOD_H

#include <stddef.h>
#include <stdint.h>

/* memprof gives up on one lookup after this many seconds, whatever
 * DEBUGINFOD_TIMEOUT (libdebuginfod's own limit on a stalled transfer,
 * 90 s by default) or DEBUGINFOD_MAXTIME say: a stripped object must not
 * hold a session for minutes. */
#define SYM_DEBUGINFOD_LIMIT_S 30

/* True when DEBUGINFOD_URLS names at least one server. */
int sym_debuginfod_enabled(void);

/* What to fetch: the separate debug file, or the object itself (an
 * executable or library of that build, for an object whose file on this
 * machine is of another build). */
enum sym_debuginfod_kind { SYM_DEBUGINFOD_DEBUGINFO, SYM_DEBUGINFOD_EXECUTABLE };

/* Downloads (or takes from the cache) the file of the build-id and
 * returns its malloc'd path in the cache, or NULL with *why set to a
 * malloc'd sentence saying what the servers answered (the caller names the
 * object).  After a server could not be reached or timed out, later
 * lookups in this process fail at once instead of waiting again. */
char *sym_debuginfod_fetch(const uint8_t *build_id, size_t len,
                           enum sym_debuginfod_kind kind, char **why);

#endif
