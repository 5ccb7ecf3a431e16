/* maps.c - parser for /proc/PID/maps text (live or copied into a dump). */
#include "lib/proc/maps.h"
#include "lib/base/array.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Parse a hex number at *p, advancing it.  At most 16 digits. */
static int parse_hex(const char **p, const char *end, uint64_t *out)
{
    const char *s = *p;
    uint64_t v = 0;
    int n = 0;
    while (s < end && n < 17) {
        int d;
        char c = *s;
        if (c >= '0' && c <= '9') d = c - '0';
        else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
        else break;
        v = v << 4 | (uint64_t)d;
        s++, n++;
    }
    if (n == 0 || n > 16)
        return -1;
    *p = s;
    *out = v;
    return 0;
}

static int expect(const char **p, const char *end, char c)
{
    if (*p >= end || **p != c)
        return -1;
    (*p)++;
    return 0;
}

static void skip_spaces(const char **p, const char *end)
{
    while (*p < end && (**p == ' ' || **p == '\t'))
        (*p)++;
}

int maps_parse_line(const char *line, size_t len, struct map_entry *out,
                    struct mp_error *err)
{
    const char *p = line, *end = line + len;
    uint64_t major, minor, inode = 0;
    memset(out, 0, sizeof *out);

    if (parse_hex(&p, end, &out->start) || expect(&p, end, '-') ||
        parse_hex(&p, end, &out->end) || expect(&p, end, ' '))
        return mp_error_set(err, "expected 'start-end' addresses");
    if (out->end < out->start)
        return mp_error_set(err, "mapping ends before it starts");
    if (end - p < 5)
        return mp_error_set(err, "expected permissions such as 'r-xp'");
    if ((p[0] != 'r' && p[0] != '-') || (p[1] != 'w' && p[1] != '-') ||
        (p[2] != 'x' && p[2] != '-') || (p[3] != 'p' && p[3] != 's') || p[4] != ' ')
        return mp_error_set(err, "expected permissions such as 'r-xp'");
    out->r = p[0] == 'r';
    out->w = p[1] == 'w';
    out->x = p[2] == 'x';
    out->shared = p[3] == 's';
    p += 5;
    if (parse_hex(&p, end, &out->offset) || expect(&p, end, ' '))
        return mp_error_set(err, "expected a hexadecimal file offset");
    if (parse_hex(&p, end, &major) || expect(&p, end, ':') ||
        parse_hex(&p, end, &minor) || expect(&p, end, ' '))
        return mp_error_set(err, "expected a device 'major:minor'");
    if (major > 0xffffffffu || minor > 0xffffffffu)
        return mp_error_set(err, "device number out of range");
    out->dev_major = (unsigned)major;
    out->dev_minor = (unsigned)minor;
    /* inode is decimal, any 64-bit value (20 digits at most) */
    int digits = 0;
    while (p < end && *p >= '0' && *p <= '9') {
        unsigned d = (unsigned)(*p - '0');
        if (inode > (UINT64_MAX - d) / 10)
            return mp_error_set(err, "inode number out of range");
        inode = inode * 10 + d;
        p++, digits++;
    }
    if (digits == 0 || (p < end && *p != ' ' && *p != '\t'))
        return mp_error_set(err, "expected a decimal inode number");
    out->inode = inode;
    skip_spaces(&p, end);

    size_t plen = (size_t)(end - p);
    static const char deleted[] = " (deleted)";
    if (plen >= sizeof deleted - 1 &&
        memcmp(end - (sizeof deleted - 1), deleted, sizeof deleted - 1) == 0) {
        out->deleted = true;
        plen -= sizeof deleted - 1;
    }
    out->path = strndup(p, plen);
    if (!out->path)
        return mp_error_set(err, "out of memory");
    return 0;
}

static int push(struct map_list *maps, const struct map_entry *e)
{
    if (array_reserve(&maps->v, &maps->cap, maps->n + 1, sizeof *maps->v, 64))
        return -1;
    maps->v[maps->n++] = *e;
    return 0;
}

static int cmp_start(const void *a, const void *b)
{
    const struct map_entry *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

int maps_parse(const char *text, size_t len, bool strict, struct map_list *out,
               struct mp_error *err)
{
    const char *p = text, *end = text + len;
    size_t lineno = 0;
    bool sorted = true;
    memset(out, 0, sizeof *out);
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        lineno++;
        if (le > p && le[-1] == '\r')
            le--;   /* a dump that went through Windows; jeprof drops \r too */
        if (le > p) {
            struct map_entry e;
            struct mp_error lerr;
            if (maps_parse_line(p, (size_t)(le - p), &e, &lerr) == 0) {
                if (out->n && e.start < out->v[out->n - 1].start)
                    sorted = false;
                if (push(out, &e)) {
                    free(e.path);
                    maps_free(out);
                    return mp_error_set(err, "out of memory");
                }
            } else if (strict) {
                maps_free(out);
                return mp_error_set(err, "line %zu: %s", lineno, lerr.msg);
            }
        }
        p = nl ? nl + 1 : end;
    }
    if (!sorted)
        qsort(out->v, out->n, sizeof *out->v, cmp_start);
    return 0;
}

/* The whole text of a /proc file into *buf (malloc'd). */
static int read_proc_text(const char *path, char **buf, size_t *len, struct mp_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return mp_error_set(err, "cannot read %s: %s", path, strerror(errno));
    size_t cap = 1 << 16;
    *len = 0;
    *buf = malloc(cap);
    for (;;) {
        if (!*buf) {
            close(fd);
            return mp_error_set(err, "out of memory");
        }
        ssize_t r = read(fd, *buf + *len, cap - *len);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            free(*buf);
            *buf = NULL;
            close(fd);
            return mp_error_set(err, "cannot read %s: %s", path, strerror(e));
        }
        if (r == 0)
            break;
        *len += (size_t)r;
        if (*len == cap) {
            cap *= 2;
            char *nb = realloc(*buf, cap);
            if (!nb)
                free(*buf);
            *buf = nb;
        }
    }
    close(fd);
    return 0;
}

/* A process whose main thread has exited (pthread_exit) keeps running in
 * its other threads, but the main thread's maps read empty: its memory
 * map is reachable only through a live thread's task directory. */
static int read_live_thread_maps(int pid, char **buf, size_t *len, char *path,
                                 size_t pathlen)
{
    char dir[64];
    snprintf(dir, sizeof dir, "/proc/%d/task", pid);
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    struct dirent *de;
    int rc = -1;
    while (rc < 0 && (de = readdir(d))) {
        int tid = atoi(de->d_name);
        struct mp_error ignored;
        if (tid <= 0 || tid == pid)
            continue;
        snprintf(path, pathlen, "/proc/%d/task/%d/maps", pid, tid);
        if (read_proc_text(path, buf, len, &ignored) < 0)
            continue;
        if (*len > 0)
            rc = 0;
        else
            free(*buf);
    }
    closedir(d);
    return rc;
}

/* The text, and in path the file it came from. */
static int read_maps_text(int pid, char **buf, size_t *len, char *path, size_t pathlen,
                          struct mp_error *err)
{
    snprintf(path, pathlen, "/proc/%d/maps", pid);
    if (read_proc_text(path, buf, len, err) < 0)
        return -1;
    if (*len == 0) {
        char *live;
        size_t live_len;
        if (read_live_thread_maps(pid, &live, &live_len, path, pathlen) == 0) {
            free(*buf);
            *buf = live;
            *len = live_len;
        }
    }
    return 0;
}

int maps_read_text_pid(int pid, char **buf, size_t *len, struct mp_error *err)
{
    char path[96];
    return read_maps_text(pid, buf, len, path, sizeof path, err);
}

int maps_read_pid(int pid, struct map_list *out, struct mp_error *err)
{
    char path[96];
    char *buf;
    size_t len;
    if (read_maps_text(pid, &buf, &len, path, sizeof path, err) < 0)
        return -1;
    int rc = maps_parse(buf, len, true, out, err);
    free(buf);
    if (rc)
        mp_error_prefix(err, "%s", path);
    return rc;
}

const struct map_entry *maps_find(const struct map_list *maps, uint64_t addr)
{
    size_t lo = 0, hi = maps->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct map_entry *e = &maps->v[mid];
        if (addr < e->start)
            hi = mid;
        else if (addr >= e->end)
            lo = mid + 1;
        else
            return e;
    }
    return NULL;
}

bool map_entry_is_file(const struct map_entry *e)
{
    return e->path && e->path[0] == '/';
}

bool maps_have_program(const struct map_list *maps)
{
    for (size_t i = 0; i < maps->n; i++)
        if (maps->v[i].x && map_entry_is_file(&maps->v[i]))
            return true;
    return false;
}

void maps_free(struct map_list *maps)
{
    for (size_t i = 0; i < maps->n; i++)
        free(maps->v[i].path);
    free(maps->v);
    memset(maps, 0, sizeof *maps);
}
