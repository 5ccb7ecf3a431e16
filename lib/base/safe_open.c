/* safe_open.c - see lib/base/safe_open.h. */
#include "lib/base/safe_open.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* "/proc/PID/root/rest": open the root and let the kernel resolve rest
 * inside it.  -2 when path is not of that form, or openat2 is missing. */
static int open_in_proc_root(const char *path, int flags)
{
    int pid_len = 0;
    if (sscanf(path, "/proc/%*[0-9]/root/%n", &pid_len) != 0 || pid_len == 0)
        return -2;
    char root[64];
    if ((size_t)pid_len - 1 >= sizeof root)
        return -2;
    memcpy(root, path, (size_t)pid_len - 1);
    root[pid_len - 1] = 0;
    int rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (rootfd < 0)
        return -1;
    struct open_how how = { .flags = (unsigned)flags, .resolve = RESOLVE_IN_ROOT };
    int fd = (int)syscall(SYS_openat2, rootfd, path + pid_len, &how, sizeof how);
    int saved = errno;
    close(rootfd);
    errno = saved;
    return fd < 0 && errno == ENOSYS ? -2 : fd;
}

int safe_open_regular(int dirfd, const char *path, bool nofollow, struct stat *st)
{
    int flags = O_PATH | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0);
    int pfd = dirfd == AT_FDCWD ? open_in_proc_root(path, flags) : -2;
    if (pfd == -2)
        pfd = openat(dirfd, path, flags);
    if (pfd < 0)
        return -1;
    struct stat local;
    if (!st)
        st = &local;
    if (fstat(pfd, st) < 0 || !S_ISREG(st->st_mode)) {
        close(pfd);
        errno = EINVAL;
        return -1;
    }
    /* Reopening the O_PATH descriptor opens that very inode. */
    char self[64];
    snprintf(self, sizeof self, "/proc/self/fd/%d", pfd);
    int fd = open(self, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    int saved = errno;
    close(pfd);
    errno = saved;
    return fd;
}
