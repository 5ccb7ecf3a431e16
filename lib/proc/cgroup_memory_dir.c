/* cgroup_memory_dir.c - see lib/proc/cgroup_memory_dir.h.  Parsing is
 * bounded by len and refuses what does not fit; opening goes through
 * descriptors only. */
#include "lib/proc/cgroup_memory_dir.h"
#include "lib/proc/procmem.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

/* ---- mountinfo ---- */

/* The next space-separated field of [*pp, end), unescaped (mountinfo
 * writes space, tab, newline and backslash as \ooo) into buf; false when
 * there is none or it does not fit. */
static bool field(const char **pp, const char *end, char *buf, size_t buflen)
{
    const char *p = *pp;
    while (p < end && *p == ' ')
        p++;
    size_t n = 0;
    for (; p < end && *p != ' '; p++) {
        char c = *p;
        if (c == '\\' && end - p >= 4 && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' &&
            p[2] <= '7' && p[3] >= '0' && p[3] <= '7') {
            c = (char)((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
            p += 3;
        }
        if (c == 0 || n + 1 >= buflen)
            return false;
        buf[n++] = c;
    }
    buf[n] = 0;
    *pp = p;
    return n > 0;
}

/* Whether the comma-separated list s holds word. */
static bool has_option(const char *s, const char *word)
{
    size_t wlen = strlen(word);
    for (const char *p = s; *p;) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        if (n == wlen && memcmp(p, word, wlen) == 0)
            return true;
        p = comma ? comma + 1 : p + n;
    }
    return false;
}

/* Keeps the first mount of a hierarchy, or a later one mounted from its
 * root where the first was a bind mount of a part. */
static void keep(struct cgroup_mount *m, const char *dir, const char *root)
{
    if (m->found && strcmp(m->root, "/") == 0)
        return;
    if (m->found && strcmp(root, "/") != 0)
        return;
    m->found = true;
    snprintf(m->dir, sizeof m->dir, "%s", dir);
    snprintf(m->root, sizeof m->root, "%s", root);
}

static void mount_line(const char *p, const char *end, struct cgroup_mounts *m)
{
    char skip[64], root[256], dir[256], word[256], type[32], opts[256];
    /* id, parent, major:minor, root, mount point, mount options */
    if (!field(&p, end, skip, sizeof skip) || !field(&p, end, skip, sizeof skip) ||
        !field(&p, end, skip, sizeof skip) || !field(&p, end, root, sizeof root) ||
        !field(&p, end, dir, sizeof dir) || !field(&p, end, word, sizeof word))
        return;
    /* optional fields, up to "-" */
    do {
        if (!field(&p, end, word, sizeof word))
            return;
    } while (strcmp(word, "-") != 0);
    if (!field(&p, end, type, sizeof type) || !field(&p, end, word, sizeof word) ||
        !field(&p, end, opts, sizeof opts) || dir[0] != '/' || root[0] != '/')
        return;
    if (strcmp(type, "cgroup2") == 0)
        keep(&m->v2, dir, root);
    else if (strcmp(type, "cgroup") == 0 && has_option(opts, "memory"))
        keep(&m->v1_memory, dir, root);
}

void cgroup_mounts_parse(const char *text, size_t len, struct cgroup_mounts *m)
{
    memset(m, 0, sizeof *m);
    const char *end = text + len;
    for (const char *p = text; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *e = nl ? nl : end;
        mount_line(p, e, m);
        p = nl ? nl + 1 : end;
    }
}

/* ---- where ---- */

/* Whether path is absolute and free of ".", ".." and empty components
 * but the one slash of "/". */
static bool path_plain(const char *path)
{
    if (path[0] != '/')
        return false;
    if (path[1] == 0)
        return true;
    for (const char *p = path + 1;;) {
        const char *slash = strchr(p, '/');
        size_t n = slash ? (size_t)(slash - p) : strlen(p);
        if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
            return false;
        if (!slash)
            return true;
        p = slash + 1;
    }
}

/* The directory of cgroup path in hierarchy m, or false with why. */
static bool dir_for(const struct cgroup_mount *m, enum cgroup_version v, const char *path,
                    struct cgroup_dir *d, char *why, size_t whylen)
{
    if (!path_plain(path)) {
        snprintf(why, whylen, "/proc/PID/cgroup names the cgroup '%.300s', which lies "
                 "outside memprof's own cgroup namespace (memprof runs in a container?): "
                 "run memprof in the host's cgroup namespace", path);
        return false;
    }
    size_t rlen = strlen(m->root);
    const char *rest = path;
    if (strcmp(m->root, "/") != 0) {
        if (strncmp(path, m->root, rlen) != 0 || (path[rlen] != '/' && path[rlen] != 0)) {
            snprintf(why, whylen, "the cgroup %.300s is not under %.200s, the part of the "
                     "hierarchy mounted on %.200s: mount the whole cgroup file system",
                     path, m->root, m->dir);
            return false;
        }
        rest = path + rlen;
    }
    while (*rest == '/')
        rest++;
    d->version = v;
    snprintf(d->mount, sizeof d->mount, "%s", m->dir);
    snprintf(d->rel, sizeof d->rel, "%s", rest);
    snprintf(d->path, sizeof d->path, "%s", path);
    return true;
}

/* The directories of v1's memory path and v2's path (NULL: none). */
static bool locate(const char *v1, const char *v2, const struct cgroup_mounts *m,
                   struct cgroup_memory_where *w, char *why, size_t whylen)
{
    bool has_v1 = v1 != NULL, has_v2 = v2 != NULL;
    char v2why[400] = "";
    if (m->v2.found && has_v2)
        w->has_pressure = dir_for(&m->v2, CGROUP_V2, v2, &w->pressure, v2why, sizeof v2why);
    if (m->v1_memory.found && has_v1)
        return dir_for(&m->v1_memory, CGROUP_V1, v1, &w->memory, why, whylen);
    if (m->v1_memory.found) {
        snprintf(why, whylen, "the memory controller is mounted as cgroup v1 (%.200s), but "
                 "/proc/PID/cgroup has no memory line (cut, or the process is exiting?)",
                 m->v1_memory.dir);
        return false;
    }
    if (m->v2.found && has_v2) {
        if (!w->has_pressure)
            snprintf(why, whylen, "%s", v2why);
        else
            w->memory = w->pressure;
        return w->has_pressure;
    }
    if (!m->v2.found)
        snprintf(why, whylen, "no cgroup file system with the memory controller is mounted "
                 "in memprof's mount namespace (see /proc/self/mountinfo)");
    else
        snprintf(why, whylen, "no cgroup v2 line (0::PATH) in /proc/PID/cgroup");
    return false;
}

bool cgroup_memory_locate(const char *text, size_t len, const struct cgroup_mounts *m,
                          struct cgroup_memory_where *w, char *why, size_t whylen)
{
    memset(w, 0, sizeof *w);
    struct cgroup_file *f = malloc(sizeof *f);      /* 16 KiB */
    struct mp_error err;
    if (!f) {
        snprintf(why, whylen, "out of memory");
        return false;
    }
    if (cgroup_file_parse(text, len, f, &err) < 0)
        memset(f, 0, sizeof *f);
    bool ok = locate(f->has[CGROUP_MEMORY] ? f->path[CGROUP_MEMORY] : NULL,
                     f->has[CGROUP_UNIFIED] ? f->path[CGROUP_UNIFIED] : NULL, m, w, why, whylen);
    free(f);
    return ok;
}

/* ---- opening ---- */

/* rel beneath the directory at, one component at a time, never following
 * a link (kernels without openat2). */
static int open_by_components(int at, const char *rel)
{
    char copy[CGROUP_PATH_MAX], *save = NULL;
    snprintf(copy, sizeof copy, "%s", rel);
    int fd = dup(at);
    for (char *c = strtok_r(copy, "/", &save); c && fd >= 0; c = strtok_r(NULL, "/", &save)) {
        int next = openat(fd, c, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int saved = errno;
        close(fd);
        errno = saved;
        fd = next;
    }
    return fd;
}

int cgroup_dir_open(const struct cgroup_dir *d, char *why, size_t whylen)
{
    int top = open(d->mount, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct statfs fs;
    if (top < 0 || fstatfs(top, &fs) < 0 ||
        (fs.f_type != CGROUP_SUPER_MAGIC && fs.f_type != CGROUP2_SUPER_MAGIC)) {
        snprintf(why, whylen, "%.200s is not a cgroup file system (%s)", d->mount,
                 top < 0 ? strerror(errno) : "another file system is mounted there");
        if (top >= 0)
            close(top);
        return -1;
    }
    if (!d->rel[0])
        return top;
    struct open_how how = {
        .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
        .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
                   RESOLVE_NO_XDEV,
    };
    int fd = (int)syscall(SYS_openat2, top, d->rel, &how, sizeof how);
    if (fd < 0 && errno == ENOSYS)
        fd = open_by_components(top, d->rel);
    int saved = errno;
    close(top);
    if (fd < 0)
        snprintf(why, whylen, "cannot open the cgroup directory %.200s/%.300s: %s%s",
                 d->mount, d->rel, strerror(saved),
                 saved == ENOENT ? " (the cgroup was removed, or the process moved: try "
                                   "again)" : "");
    return fd;
}
