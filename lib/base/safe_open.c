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

/* The length of path's root prefix when it lies under a process's root
 * (/proc/PID/root/ or, for a thread when the leader has exited,
 * /proc/PID/task/TID/root/), else 0. */
static size_t proc_root_prefix(const char *path)
{
    int n = 0;
    if (sscanf(path, "/proc/%*[0-9]/root/%n", &n) == 0 && n > 0)
        return (size_t)n - 1;
    n = 0;
    if (sscanf(path, "/proc/%*[0-9]/task/%*[0-9]/root/%n", &n) == 0 && n > 0)
        return (size_t)n - 1;
    return 0;
}

/* path = root (its first rootlen bytes) + "/rest": open the root and let
 * the kernel resolve rest inside it, with no magic link on the way.  -2
 * when openat2 is missing. */
static int open_under(const char *path, size_t rootlen, int flags)
{
    char *root = strndup(path, rootlen);
    int rootfd = root ? open(root, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
    free(root);
    if (rootfd < 0)
        return -1;
    struct open_how how = {
        .flags = (unsigned)flags,
        .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
    };
    int fd = (int)syscall(SYS_openat2, rootfd, path + rootlen + 1, &how, sizeof how);
    int saved = errno;
    close(rootfd);
    errno = saved;
    return fd < 0 && errno == ENOSYS ? -2 : fd;
}

/* The O_PATH descriptor checked to be a regular file, reopened for
 * reading (the very inode), or -1. */
static int reopen_regular(int pfd, struct stat *st)
{
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
    char self[64];
    snprintf(self, sizeof self, "/proc/self/fd/%d", pfd);
    int fd = open(self, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    int saved = errno;
    close(pfd);
    errno = saved;
    return fd;
}

static int open_path(int dirfd, const char *path, size_t rootlen, bool nofollow)
{
    int flags = O_PATH | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0);
    int pfd = rootlen ? open_under(path, rootlen, flags) : -2;
    if (pfd == -2)
        pfd = openat(dirfd, path, flags);
    return pfd;
}

int safe_open_in_root(const char *root, const char *path, bool nofollow, struct stat *st)
{
    size_t rootlen = root ? strlen(root) : 0;
    while (rootlen > 1 && root[rootlen - 1] == '/')
        rootlen--;
    if (!rootlen || strncmp(path, root, rootlen) != 0 || path[rootlen] != '/' ||
        (rootlen == 1 && root[0] == '/'))
        return safe_open_regular(AT_FDCWD, path, nofollow, st);
    return reopen_regular(open_path(AT_FDCWD, path, rootlen, nofollow), st);
}

int safe_open_regular(int dirfd, const char *path, bool nofollow, struct stat *st)
{
    size_t rootlen = dirfd == AT_FDCWD ? proc_root_prefix(path) : 0;
    return reopen_regular(open_path(dirfd, path, rootlen, nofollow), st);
}
