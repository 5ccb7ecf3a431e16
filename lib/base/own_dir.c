/* own_dir.c - memprof's own private directories under $TMPDIR (see
 * own_dir.h).  A directory is alive while an open descriptor of it holds
 * an flock(2) lock: the lock ends with the last process holding it (a
 * SIGKILLed memprof, every worker it forked), so a directory that can be
 * locked by someone else was left behind and may go.  The sweep touches
 * only what memprof's own user owns with mode 0700 and never follows a
 * link, as $TMPDIR is often a directory every user can write. */
#include "lib/base/own_dir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* How deep memprof's directories go: files, directories of files
 * (serve's run-N), and a saved run being archived inside one
 * (run-N/memprof-run-P-N/.build-id/xx/). */
#define OWN_DIR_DEPTH 4

/* Directories made and removed under a sweeper's feet before one stays. */
#define MAKE_ATTEMPTS 8

/* $TMPDIR when it is an absolute path short enough for the files memprof
 * puts below it, else /tmp. */
static const char *tmp_root(void)
{
    const char *tmp = getenv("TMPDIR");
    return tmp && tmp[0] == '/' && strlen(tmp) <= 512 ? tmp : "/tmp";
}

/* Remove `name` in directory `parent` with the files in it and, `depth`
 * levels down, the directories of files: nothing followed through a link. */
void own_dir_remove_tree(int parent, const char *name, int depth)
{
    int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
    if (fd >= 0 && !dir)
        close(fd);
    for (struct dirent *e; dir && (e = readdir(dir));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        if (unlinkat(fd, e->d_name, 0) < 0 && errno == EISDIR && depth > 0)
            own_dir_remove_tree(fd, e->d_name, depth - 1);
    }
    if (dir)
        closedir(dir);
    unlinkat(parent, name, AT_REMOVEDIR);
}

/* Is the entry `name` of root one of ours whose memprof is gone?  Then
 * remove it, holding its lock so that no one else takes it meanwhile. */
static void sweep_one(int root, const char *name)
{
    int fd = openat(root, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return;
    struct stat st;
    if (fstat(fd, &st) == 0 && st.st_uid == geteuid() && (st.st_mode & 07777) == 0700 &&
        flock(fd, LOCK_EX | LOCK_NB) == 0)
        own_dir_remove_tree(root, name, OWN_DIR_DEPTH);
    close(fd);
}

static void sweep(const char *tmp, const char *prefix)
{
    DIR *dir = opendir(tmp);
    size_t plen = strlen(prefix);
    for (struct dirent *e; dir && (e = readdir(dir));)
        if (!strncmp(e->d_name, prefix, plen) && e->d_name[plen] == '.')
            sweep_one(dirfd(dir), e->d_name);
    if (dir)
        closedir(dir);
}

/* Lock the directory just made; false when another memprof's sweep took
 * it first (it is gone, or going). */
static bool lock_new(const char *path, int *fd_out)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0 && fstat(fd, &st) == 0 && st.st_nlink) {
        *fd_out = fd;
        return true;
    }
    if (fd >= 0)
        close(fd);
    return false;
}

int own_dir_make(struct own_dir *d, const char *prefix, const char *what,
                 struct mp_error *err)
{
    const char *tmp = tmp_root();
    *d = (struct own_dir){.fd = -1};
    sweep(tmp, prefix);
    for (int attempt = 0; attempt < MAKE_ATTEMPTS; attempt++) {
        char *path = NULL;
        if (asprintf(&path, "%s/%s.XXXXXX", tmp, prefix) < 0)
            return mp_error_set(err, "out of memory");
        if (!mkdtemp(path)) {        /* 0700 */
            int e = errno;
            free(path);
            return mp_error_set(err, "cannot make a directory for %s in %s (%s): set "
                                "TMPDIR to a writable directory", what, tmp, strerror(e));
        }
        if (lock_new(path, &d->fd)) {
            d->path = path;
            return 0;
        }
        free(path);
    }
    return mp_error_set(err, "cannot keep a directory for %s in %s: each one made was removed "
                        "at once by another process; set TMPDIR to a directory of your own",
                        what, tmp);
}

void own_dir_remove(struct own_dir *d)
{
    if (!d->path)
        return;
    own_dir_remove_tree(AT_FDCWD, d->path, OWN_DIR_DEPTH);
    close(d->fd);
    free(d->path);
    *d = (struct own_dir){.fd = -1};
}
