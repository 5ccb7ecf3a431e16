/* file_read.h - reading a whole file whose size is not known beforehand
 * (the kernel's /proc and cgroup files report 0 or 4096 as their size):
 * read to the end, bounded, NUL-terminated. */
#ifndef MEMPROF_FILE_READ_H
#define MEMPROF_FILE_READ_H

#include <stddef.h>

/* Everything fd gives until end of file, at most max bytes (the rest is
 * cut), malloc'd with a NUL after it and its length in *len; NULL out of
 * memory. */
char *file_read_fd(int fd, size_t max, size_t *len);

/* The same for the file at path (a /proc file memprof names itself, not a
 * path from a target: those go through safe_open); NULL when it cannot be
 * opened, errno set. */
char *file_read_path(const char *path, size_t max, size_t *len);

#endif
