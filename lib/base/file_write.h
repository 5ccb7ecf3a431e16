/* file_write.h - writing a whole file the user named (a dump saved with
 * 'dump FILE', a run directory's files): every byte written or a message
 * saying which step failed, never a silently short file. */
#ifndef MEMPROF_FILE_WRITE_H
#define MEMPROF_FILE_WRITE_H

#include <stddef.h>
#include <sys/types.h>

#include "lib/base/error.h"

/* Write len bytes to fd, past short writes and EINTR.  0, or -1 with
 * errno set (ENOSPC for a write that wrote nothing). */
int file_write_all(int fd, const void *data, size_t len);

/* Open path with O_WRONLY | O_CREAT | O_CLOEXEC | flags (O_TRUNC to
 * replace, O_EXCL | O_NOFOLLOW for a file that must be new), write len
 * bytes, close.  0, or -1 with err set ("cannot create/write PATH: ..."). */
int file_write_new(const char *path, int flags, mode_t mode, const void *data, size_t len,
                   struct mp_error *err);

#endif
