/* private_dir.c - where files come out of the process when a memfd cannot
 * carry them (and where it writes on its own, prof.gdump): a
 * private directory in the process's filesystem (mode 0700, owned by the
 * process's user, unpredictable name), made, checked, changed, read and
 * removed only through file descriptors.  Its parent is reached from
 * /proc/PID/root one component at a time without following any symbolic
 * link; the process's user can write there and may rename or replace
 * anything at any moment, so no name is ever trusted twice: what memprof
 * made is checked with fstat on its own descriptor before fchown/fchmod,
 * and every dump is opened O_NOFOLLOW and checked (a regular file of the
 * process's user with one link) before it is read.  The parent's
 * descriptor stays open so the directory can be removed after the
 * process (and its mount namespace) has gone.  Directories left by a
 * memprof that died are removed when a later one uses the same parent. */
#include "attach/target_internal.h"
#include "attach/threads.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/base/array.h"
#include "lib/base/file_read.h"
#include "lib/base/safe_open.h"
#include "lib/proc/environ.h"

#define DIR_PREFIX "memprof-"

/* The most of the target's environment read (the kernel gives the
 * process's own strings; they fit in its argument limit). */
#define ENVIRON_MAX (8u << 20)

/* TMPDIR from the target's environment (as its getenv() sees it) when
 * absolute and not too long, else NULL. */
static char *target_tmpdir(pid_t pid)
{
    char path[96];
    threads_proc_dir(pid, path, sizeof path - 8);   /* a live thread's */
    strcat(path, "/environ");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    size_t len = 0;
    char *env = fd >= 0 ? file_read_fd(fd, ENVIRON_MAX, &len) : NULL;
    if (fd >= 0)
        close(fd);
    const char *dir = env ? proc_environ_value(env, len, "TMPDIR") : NULL;
    char *found = dir && dir[0] == '/' && strlen(dir) < 1024 ? strdup(dir) : NULL;
    free(env);
    return found;
}

/* Who the process creates files as. */
struct creds {
    uid_t uid;
    gid_t gid;
    gid_t groups[64];
    size_t ngroups;
};

static void read_creds(const struct target *t, struct creds *c)
{
    c->uid = t->euid;
    c->gid = t->egid;
    c->ngroups = 0;
    char path[64], line[1024];
    snprintf(path, sizeof path, "/proc/%d/status", t->pid);
    FILE *f = fopen(path, "re");
    while (f && fgets(line, sizeof line, f)) {
        unsigned a, b, c3, d;
        if (sscanf(line, "Uid: %u %u %u %u", &a, &b, &c3, &d) == 4)
            c->uid = d;     /* the fs id decides file access */
        else if (sscanf(line, "Gid: %u %u %u %u", &a, &b, &c3, &d) == 4)
            c->gid = d;
        else if (strncmp(line, "Groups:", 7) == 0) {
            char *p = line + 7, *end;
            for (;;) {
                unsigned long g = strtoul(p, &end, 10);
                if (end == p || c->ngroups == sizeof c->groups / sizeof *c->groups)
                    break;
                c->groups[c->ngroups++] = (gid_t)g;
                p = end;
            }
        }
    }
    if (f)
        fclose(f);
}

/* Can the process create a directory in one with these attributes?  (ACLs
 * are not read: at worst a usable directory is skipped.) */
static bool may_write(const struct stat *st, const struct creds *c)
{
    if (c->uid == 0)
        return true;
    mode_t need = S_IWOTH | S_IXOTH;
    if (st->st_uid == c->uid)
        need = S_IWUSR | S_IXUSR;
    else {
        bool member = st->st_gid == c->gid;
        for (size_t i = 0; i < c->ngroups && !member; i++)
            member = st->st_gid == c->groups[i];
        if (member)
            need = S_IWGRP | S_IXGRP;
    }
    return (st->st_mode & need) == need;
}

/* path (absolute, as the process sees it) from its root, one component
 * at a time, never following a symbolic link: the O_PATH descriptor of
 * the directory, or -1 with errno set. */
static int open_in_root(pid_t pid, const char *path)
{
    char root[96];
    threads_proc_dir(pid, root, sizeof root - 8);   /* a live thread's */
    strcat(root, "/root");
    int fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
    char *copy = strdup(path), *save = NULL;
    if (!copy) {
        if (fd >= 0)
            close(fd);
        errno = ENOMEM;
        return -1;
    }
    for (char *c = strtok_r(copy, "/", &save); c && fd >= 0; c = strtok_r(NULL, "/", &save)) {
        if (strcmp(c, ".") == 0)
            continue;
        int next = strcmp(c, "..") == 0 ? (errno = EINVAL, -1)
                   : openat(fd, c, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int saved = errno;
        close(fd);
        errno = saved;
        fd = next;
    }
    free(copy);
    return fd;
}

static bool same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* A listing of the directory open as dfd (an O_PATH descriptor cannot
 * be read: "." is opened again through it), or NULL. */
static DIR *list_dir(int dfd)
{
    int rfd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = rfd >= 0 ? fdopendir(rfd) : NULL;
    if (!d && rfd >= 0)
        close(rfd);
    return d;
}

/* Remove every entry of the directory open as dfd (unlinkat never follows
 * a link; subdirectories are not memprof's and stay). */
static void empty_dir(int dfd)
{
    DIR *d = list_dir(dfd);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d)))
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
            unlinkat(dfd, de->d_name, 0);
    closedir(d);
}

/* Remove name from parent if it still is the directory open as dfd. */
static void remove_dir_at(int parent, const char *name, int dfd)
{
    struct stat mine, there;
    if (fstat(dfd, &mine) == 0 &&
        fstatat(parent, name, &there, AT_SYMLINK_NOFOLLOW) == 0 && same_file(&mine, &there))
        unlinkat(parent, name, AT_REMOVEDIR);
}

/* The pid in a name memprof gives its directories ("memprof-PID-HEX"). */
static pid_t dir_owner(const char *name)
{
    if (strncmp(name, DIR_PREFIX, sizeof DIR_PREFIX - 1) != 0)
        return 0;
    char *end;
    long pid = strtol(name + sizeof DIR_PREFIX - 1, &end, 10);
    if (end == name + sizeof DIR_PREFIX - 1 || *end != '-' || pid <= 0 ||
        pid > 0x3fffffff || strlen(end + 1) != 16)
        return 0;
    return (pid_t)pid;
}

/* Directories of dead memprofs in parent: emptied when they belong to the
 * process's user (as memprof leaves them), removed when empty. */
static void sweep_dead(const struct target *t, int parent)
{
    DIR *d = list_dir(parent);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d))) {
        pid_t owner = dir_owner(de->d_name);
        if (!owner || owner == getpid() || memprof_alive(owner))
            continue;
        int dfd = openat(parent, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        struct stat st;
        if (dfd < 0)
            continue;
        if (fstat(dfd, &st) == 0 && (st.st_uid == t->euid || st.st_uid == 0)) {
            if (st.st_uid == t->euid)
                empty_dir(dfd);
            remove_dir_at(parent, de->d_name, dfd);
        }
        close(dfd);
    }
    closedir(d);
}

static int random_name(char *buf, size_t len)
{
    unsigned char r[8];
    if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r)
        return -1;
    snprintf(buf, len, DIR_PREFIX "%d-%02x%02x%02x%02x%02x%02x%02x%02x", (int)getpid(),
             r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7]);
    return 0;
}

/* Make the directory in candidate: 0 made, 1 skipped (why set), -1 error
 * (something replaced what memprof made: not worth another candidate). */
static int make_in(struct target *t, const struct creds *c, const char *candidate,
                   char *why, size_t whylen, struct mp_error *err)
{
    int parent = open_in_root(t->pid, candidate);
    if (parent < 0) {
        snprintf(why, whylen, "%s: %s%s", candidate, strerror(errno),
                 errno == ENOTDIR || errno == ELOOP ? " (memprof follows no symbolic "
                 "link there)" : "");
        return 1;
    }
    struct stat pst, st;
    if (fstat(parent, &pst) < 0 || !may_write(&pst, c)) {
        snprintf(why, whylen, "%s: process %d (uid %u) cannot write and search it",
                 candidate, t->pid, (unsigned)c->uid);
        close(parent);
        return 1;
    }
    sweep_dead(t, parent);
    char name[sizeof t->dump_dir_name];
    if (random_name(name, sizeof name) < 0 || mkdirat(parent, name, 0700) < 0) {
        snprintf(why, whylen, "%s: %s", candidate, strerror(errno));
        close(parent);
        return 1;
    }
    int dfd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0 || fstat(dfd, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
        st.st_nlink != 2 || st.st_dev != pst.st_dev) {
        if (dfd >= 0)
            close(dfd);
        close(parent);
        return mp_error_set(err, "the directory %s/%s that memprof had just made in "
                            "process %d's filesystem was replaced: someone who can "
                            "write to %s is interfering; memprof changed nothing there",
                            candidate, name, t->pid, candidate);
    }
    if (fchmod(dfd, 0700) < 0 ||
        ((st.st_uid != t->euid || st.st_gid != t->egid) && fchown(dfd, t->euid, t->egid) < 0)) {
        int e = errno;
        remove_dir_at(parent, name, dfd);
        close(dfd);
        close(parent);
        return mp_error_set(err, "cannot give the dump directory in %s to uid %u: %s",
                            candidate, (unsigned)t->euid, strerror(e));
    }
    size_t plen = strlen(candidate);
    while (plen > 1 && candidate[plen - 1] == '/')
        plen--;
    if (asprintf(&t->dump_dir, "%.*s/%s", (int)(plen == 1 ? 0 : plen), candidate, name) < 0) {
        t->dump_dir = NULL;
        remove_dir_at(parent, name, dfd);
        close(dfd);
        close(parent);
        return mp_error_set(err, "out of memory");
    }
    snprintf(t->dump_dir_name, sizeof t->dump_dir_name, "%s", name);
    t->dump_parent_fd = parent;
    t->dump_dir_fd = dfd;
    t->dump_dir_made = true;
    return 0;
}

static int dump_dir_prepare(struct target *t, const char *user_dir, struct mp_error *err)
{
    if (t->dump_dir_made)
        return 0;
    struct creds c;
    read_creds(t, &c);
    char *tmpdir = user_dir ? NULL : target_tmpdir(t->pid);
    const char *cands[] = { user_dir ? user_dir : tmpdir, user_dir ? NULL : "/tmp",
                            "/var/tmp", "/dev/shm" };
    size_t ncands = user_dir ? 1 : sizeof cands / sizeof *cands;
    char tried[2048] = "", why[600];
    int rc = 1;
    for (size_t i = 0; i < ncands && rc == 1; i++) {
        if (!cands[i] || (i > 0 && cands[0] && strcmp(cands[i], cands[0]) == 0))
            continue;
        rc = make_in(t, &c, cands[i], why, sizeof why, err);
        if (rc == 1)
            snprintf(tried + strlen(tried), sizeof tried - strlen(tried), "%s%s",
                     tried[0] ? "; " : "", why);
    }
    free(tmpdir);
    if (rc == 1)
        return mp_error_set(err, "found no directory where process %d can write a "
                            "dump (%s): give one it can write with --dump-dir DIR "
                            "(as the process sees it)", t->pid, tried);
    return rc;
}

static int read_all(int fd, off_t size, char **data, size_t *len, struct mp_error *err)
{
    size_t cap = (size_t)size + 1, n = 0;
    char *buf = malloc(cap);
    if (!buf)
        return mp_error_set(err, "out of memory reading a %lld-byte dump", (long long)size);
    for (;;) {
        if (n + 1 >= cap) {
            if (cap > (size_t)TARGET_FILE_MAX) {
                free(buf);
                return mp_error_set(err, "the dump grew past %ld bytes while memprof "
                                    "read it: refusing it", TARGET_FILE_MAX);
            }
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

int target_read_fd(int fd, const char *what, char **data, size_t *len,
                 struct mp_error *err)
{
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
        return mp_error_set(err, "%s is not a regular file: refusing to read it", what);
    if (st.st_size > TARGET_FILE_MAX)
        return mp_error_set(err, "%s is %lld bytes, more than memprof reads (%ld): "
                            "lower the sample rate or dump with 'mallctl prof.dump "
                            "PATH' and read it offline", what, (long long)st.st_size,
                            TARGET_FILE_MAX);
    return read_all(fd, st.st_size, data, len, err);
}

/* Read and remove name from the private directory; a file modified less
 * than min_age seconds ago is left alone (returns 1: the process may still
 * be writing it). */
static int take_file(struct target *t, const char *name, double min_age, char **data,
                     size_t *len, struct mp_error *err)
{
    struct stat st;
    int fd = safe_open_regular(t->dump_dir_fd, name, true, &st);
    if (fd < 0)
        return mp_error_set(err, "cannot open the dump %s/%s: %s", t->dump_dir, name,
                            errno == EINVAL ? "not a regular file" : strerror(errno));
    if (min_age > 0) {
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        double age = (double)(now.tv_sec - st.st_mtim.tv_sec) +
                     (now.tv_nsec - st.st_mtim.tv_nsec) / 1e9;
        if (age < min_age) {
            close(fd);
            return 1;
        }
    }
    unlinkat(t->dump_dir_fd, name, 0);
    int rc;
    if (st.st_uid != t->euid || st.st_nlink != 1)
        rc = mp_error_set(err, "the dump %s/%s is not a file process %d wrote (owner "
                          "uid %u, %lu links): refusing to read it", t->dump_dir, name,
                          t->pid, (unsigned)st.st_uid, (unsigned long)st.st_nlink);
    else
        rc = target_read_fd(fd, "the dump", data, len, err);
    close(fd);
    return rc;
}

void dump_dir_remove(struct target *t)
{
    if (t->dump_dir_made) {
        empty_dir(t->dump_dir_fd);
        remove_dir_at(t->dump_parent_fd, t->dump_dir_name, t->dump_dir_fd);
        close(t->dump_dir_fd);
        close(t->dump_parent_fd);
        t->dump_dir_made = false;
    }
    free(t->dump_dir);
    t->dump_dir = NULL;
}

/* ---- files the process writes there on its own (prof.gdump) ---- */

const char *target_private_dir(struct target *t, const char *user_dir, struct mp_error *err)
{
    if (dump_dir_prepare(t, user_dir, err) < 0)
        return NULL;
    return t->dump_dir;
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

long target_private_dir_list(struct target *t, const char *prefix, char ***names)
{
    *names = NULL;
    if (!t->dump_dir_made)
        return 0;
    DIR *d = list_dir(t->dump_dir_fd);
    if (!d)
        return -1;
    size_t n = 0, cap = 0, plen = strlen(prefix);
    struct dirent *de;
    long rc = 0;
    while ((de = readdir(d))) {
        if (strncmp(de->d_name, prefix, plen) != 0)
            continue;
        char *copy = strdup(de->d_name);
        if (!copy || array_reserve(names, &cap, n + 1, sizeof **names, 8)) {
            free(copy);
            rc = -1;
            break;
        }
        (*names)[n++] = copy;
    }
    closedir(d);
    if (rc < 0) {
        for (size_t i = 0; i < n; i++)
            free((*names)[i]);
        free(*names);
        *names = NULL;
        return -1;
    }
    if (n)
        qsort(*names, n, sizeof **names, compare_names);
    return (long)n;
}

int target_private_dir_take(struct target *t, const char *name, double min_age,
                            char **data, size_t *len, struct mp_error *err)
{
    if (!t->dump_dir_made || strchr(name, '/'))
        return mp_error_set(err, "no file %s in memprof's private directory", name);
    return take_file(t, name, min_age, data, len, err);
}
