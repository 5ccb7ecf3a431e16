/* dump_dir.c - the session's private directory in the target's filesystem
 * where the target writes heap dumps: created through /proc/PID/root under
 * the target's TMPDIR (or /tmp) with an unpredictable name, mode 0700,
 * owned by the target's user; read back without following symlinks;
 * removed with its contents when the session ends. */
#include "attach/target_internal.h"
#include "attach/threads.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_DUMP (1024L * 1024 * 1024)

/* TMPDIR from the target's environment when absolute, else /tmp. */
static char *target_tmpdir(pid_t pid)
{
    char path[96];
    threads_proc_dir(pid, path, sizeof path - 8);   /* a live thread's */
    strcat(path, "/environ");
    FILE *f = fopen(path, "re");
    char *found = NULL, *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while (f && (n = getdelim(&line, &cap, 0, f)) > 0) {
        if (strncmp(line, "TMPDIR=/", 8) == 0 && strlen(line + 7) < 1024 &&
            !strstr(line, "/..")) {
            free(found);
            found = strdup(line + 7);
        }
    }
    free(line);
    if (f)
        fclose(f);
    if (found) {
        size_t len = strlen(found);
        while (len > 1 && found[len - 1] == '/')
            found[--len] = 0;
    }
    return found ? found : strdup("/tmp");
}

static bool same_inode(const char *a, const char *b)
{
    struct stat x, y;
    return stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev &&
           x.st_ino == y.st_ino;
}

/* When the target shares memprof's root directory *and* mount namespace,
 * use plain paths: the directory can then still be removed after the target
 * has exited.  The same root in another mount namespace (unshare --mount, a
 * private /tmp) is not the same filesystem view. */
static bool same_view(pid_t pid)
{
    char dir[64], root[96], ns[96];
    threads_proc_dir(pid, dir, sizeof dir);
    snprintf(root, sizeof root, "%s/root", dir);
    snprintf(ns, sizeof ns, "%s/ns/mnt", dir);
    return same_inode(root, "/") && same_inode(ns, "/proc/self/ns/mnt");
}

static int make_dir(struct target *t, struct mp_error *err)
{
    char *tmp = target_tmpdir(t->pid);
    char host[4200], dir[64];
    threads_proc_dir(t->pid, dir, sizeof dir);
    if (same_view(t->pid))
        snprintf(host, sizeof host, "%s/memprof.XXXXXX", tmp);
    else
        snprintf(host, sizeof host, "%s/root%s/memprof.XXXXXX", dir, tmp);
    if (!mkdtemp(host)) {
        mp_error_set(err, "cannot create a dump directory in %s of process %d (as "
                     "the process sees it): %s; the process writes its dumps in its "
                     "TMPDIR or /tmp, which must exist and be writable",
                     tmp, t->pid, strerror(errno));
        free(tmp);
        return -1;
    }
    /* mkdtemp gives 0700; the target (not memprof) writes the dump. */
    if (chown(host, t->euid, t->egid) < 0 || chmod(host, 0700) < 0) {
        mp_error_set(err, "cannot give %s to uid %u: %s", host, t->euid, strerror(errno));
        rmdir(host);
        free(tmp);
        return -1;
    }
    const char *name = strrchr(host, '/') + 1;
    char target_view[2100];
    snprintf(target_view, sizeof target_view, "%s/%s", tmp, name);
    free(tmp);
    t->dump_dir = strdup(target_view);
    t->dump_dir_host = strdup(host);
    return t->dump_dir && t->dump_dir_host ? 0 : mp_error_set(err, "out of memory");
}

int target_dump_dir(struct target *t, const char **path, struct mp_error *err)
{
    if (!t->dump_dir && make_dir(t, err) < 0)
        return -1;
    *path = t->dump_dir;
    return 0;
}

/* The file name of target_path when it lies directly in the dump dir. */
static const char *name_in_dir(const struct target *t, const char *target_path)
{
    size_t dl = strlen(t->dump_dir);
    if (strncmp(target_path, t->dump_dir, dl) != 0 || target_path[dl] != '/')
        return NULL;
    const char *name = target_path + dl + 1;
    if (!*name || strchr(name, '/') || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
        return NULL;
    return name;
}

static int read_all(int fd, off_t size, char **data, size_t *len, struct mp_error *err)
{
    size_t cap = (size_t)size + 1, n = 0;
    char *buf = malloc(cap);
    if (!buf)
        return mp_error_set(err, "out of memory reading a %lld-byte dump", (long long)size);
    for (;;) {
        if (n + 1 >= cap) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                return mp_error_set(err, "out of memory reading a dump");
            }
            buf = nb;
            cap *= 2;
        }
        ssize_t r = read(fd, buf + n, cap - 1 - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            free(buf);
            return mp_error_set(err, "cannot read the dump: %s", strerror(errno));
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    buf[n] = 0;
    *data = buf;
    *len = n;
    return 0;
}

static int fetch_at(int dfd, const char *name, const char *target_path, char **data,
                    size_t *len, struct mp_error *err)
{
    int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return mp_error_set(err, "cannot open the dump %s: %s", target_path,
                            strerror(errno));
    struct stat st;
    int rc;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
        rc = mp_error_set(err, "the dump %s is not a regular file: refusing to read it",
                          target_path);
    else if (st.st_size > MAX_DUMP)
        rc = mp_error_set(err, "the dump %s is %lld bytes: too large", target_path,
                          (long long)st.st_size);
    else
        rc = read_all(fd, st.st_size, data, len, err);
    close(fd);
    if (rc == 0)
        unlinkat(dfd, name, 0);
    return rc;
}

int target_fetch_dump(struct target *t, const char *target_path, char **data,
                      size_t *len, struct mp_error *err)
{
    if (!t->dump_dir)
        return mp_error_set(err, "no dump directory was created in this session");
    const char *name = name_in_dir(t, target_path);
    if (!name)
        return mp_error_set(err, "%s is not a file of the session's dump directory %s",
                            target_path, t->dump_dir);
    int dfd = open(t->dump_dir_host, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0)
        return mp_error_set(err, "cannot open the dump directory %s: %s", t->dump_dir,
                            strerror(errno));
    int rc = fetch_at(dfd, name, target_path, data, len, err);
    close(dfd);
    return rc;
}

void dump_dir_remove(struct target *t)
{
    if (!t->dump_dir_host)
        goto out;
    int dfd = open(t->dump_dir_host, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd >= 0) {
        DIR *d = fdopendir(dfd);
        struct dirent *de;
        while (d && (de = readdir(d)))
            if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
                unlinkat(dfd, de->d_name, 0);
        if (d)
            closedir(d);
        else
            close(dfd);
    }
    rmdir(t->dump_dir_host);
out:
    free(t->dump_dir);
    free(t->dump_dir_host);
    t->dump_dir = t->dump_dir_host = NULL;
}
