/* file_write.c - see lib/base/file_write.h. */
#include "lib/base/file_write.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

int file_write_all(int fd, const void *data, size_t len)
{
    for (size_t off = 0; off < len;) {
        ssize_t w = write(fd, (const char *)data + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = ENOSPC;
            return -1;
        }
        off += (size_t)w;
    }
    return 0;
}

int file_write_new(const char *path, int flags, mode_t mode, const void *data, size_t len,
                   struct mp_error *err)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | flags, mode);
    if (fd < 0)
        return mp_error_set(err, "cannot create %s: %s", path, strerror(errno));
    if (file_write_all(fd, data, len)) {
        int saved = errno;
        close(fd);
        return mp_error_set(err, "cannot write %s: %s", path, strerror(saved));
    }
    if (close(fd))
        return mp_error_set(err, "cannot write %s: %s", path, strerror(errno));
    return 0;
}
