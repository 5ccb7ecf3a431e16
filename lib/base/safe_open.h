/* safe_open.h - opening a file that lies in a world memprof does not
 * trust (a process's root, its TMPDIR, files beside its objects) without
 * side effects: the name is resolved with O_PATH (a FIFO or a device is
 * never opened: no blocking, no watchdog armed), checked to be a regular
 * file, and only then opened for reading through /proc/self/fd.  Paths
 * under /proc/PID/root/ (and /proc/PID/task/TID/root/) stay inside that
 * root (openat2 RESOLVE_IN_ROOT, no magic links): an absolute symbolic
 * link there never reaches memprof's own files. */
#ifndef MEMPROF_SAFE_OPEN_H
#define MEMPROF_SAFE_OPEN_H

#include <stdbool.h>
#include <sys/stat.h>

/* Open path (relative to dirfd, or AT_FDCWD) read-only.  nofollow: a
 * symbolic link as the last component is refused.  *st (may be NULL)
 * receives what was opened.  Returns the descriptor, or -1 with errno set
 * (EINVAL: not a regular file). */
int safe_open_regular(int dirfd, const char *path, bool nofollow, struct stat *st);

/* The same for a path made of root + "/" + a path inside it (a --sysroot,
 * a process's root): resolved inside root, so that an absolute symbolic
 * link there names root's file, never memprof's.  Any other path (root
 * NULL, "" or "/", or path not under it) is opened as safe_open_regular
 * does. */
int safe_open_in_root(const char *root, const char *path, bool nofollow, struct stat *st);

#endif
