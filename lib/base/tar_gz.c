/* tar_gz.c - see lib/base/tar_gz.h.  The ustar header is written field by
 * field as POSIX.1-2001 lays it out (numbers in octal, the checksum over
 * the header with its own field as spaces); names longer than 99 bytes
 * are split into prefix and name at a '/'. */
#include "lib/base/tar_gz.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define BLOCK 512

struct ustar {
    char name[100], mode[8], uid[8], gid[8], size[12], mtime[12], chksum[8], typeflag;
    char linkname[100], magic[6], version[2], uname[32], gname[32];
    char devmajor[8], devminor[8], prefix[155], pad[12];
};
_Static_assert(sizeof(struct ustar) == BLOCK, "a ustar header is one block");

struct writer {
    gzFile gz;
    uint64_t left;            /* bytes of files still allowed */
    uint64_t max;             /* of max_bytes */
    struct mp_error *err;
};

static int gz_put(struct writer *w, const void *data, size_t len)
{
    if (len && gzwrite(w->gz, data, (unsigned)len) != (int)len) {
        int zerr;
        const char *msg = gzerror(w->gz, &zerr);
        return mp_error_set(w->err, "cannot write the archive: %s",
                            zerr == Z_ERRNO ? strerror(errno) : msg);
    }
    return 0;
}

/* path into the header's name, or its prefix and name split at a '/'. */
static bool put_name(struct ustar *h, const char *path)
{
    size_t n = strlen(path);
    if (n < sizeof h->name) {
        memcpy(h->name, path, n);
        return true;
    }
    for (size_t cut = n; cut-- > 0;) {
        if (path[cut] != '/')
            continue;
        if (cut <= sizeof h->prefix && n - cut - 1 < sizeof h->name && n - cut - 1 > 0) {
            memcpy(h->prefix, path, cut);
            memcpy(h->name, path + cut + 1, n - cut - 1);
            return true;
        }
    }
    return false;
}

/* v in octal, zero-padded, filling a field of width bytes but its last
 * (NUL); the largest such number where v does not fit (never for a size:
 * max_bytes keeps sizes far below 8 GiB). */
static void octal(char *field, size_t width, uint64_t v)
{
    size_t digits = width - 1;
    uint64_t max = (UINT64_C(1) << (3 * digits)) - 1;
    if (v > max)
        v = max;
    for (size_t i = digits; i-- > 0; v >>= 3)
        field[i] = (char)('0' + (v & 7));
    field[digits] = 0;
}

static int header(struct writer *w, const char *path, const struct stat *st, char type,
                  uint64_t size)
{
    struct ustar h;
    memset(&h, 0, sizeof h);
    if (!put_name(&h, path))
        return mp_error_set(w->err, "cannot archive %s: its name is too long for tar", path);
    octal(h.mode, sizeof h.mode, st->st_mode & 07777);
    octal(h.uid, sizeof h.uid, 0);
    octal(h.gid, sizeof h.gid, 0);
    octal(h.size, sizeof h.size, size);
    octal(h.mtime, sizeof h.mtime, st->st_mtime > 0 ? (uint64_t)st->st_mtime : 0);
    h.typeflag = type;
    memcpy(h.magic, "ustar", 6);
    memcpy(h.version, "00", 2);
    memset(h.chksum, ' ', sizeof h.chksum);
    unsigned sum = 0;
    for (size_t i = 0; i < sizeof h; i++)
        sum += ((const unsigned char *)&h)[i];
    octal(h.chksum, 7, sum);                 /* six digits, a NUL, then a space */
    h.chksum[7] = ' ';
    return gz_put(w, &h, sizeof h);
}

/* A regular file's bytes, exactly st_size of them, padded to a block. */
static int file_body(struct writer *w, int fd, const char *path, uint64_t size)
{
    char buf[65536];
    uint64_t done = 0;
    while (done < size) {
        size_t want = size - done < sizeof buf ? (size_t)(size - done) : sizeof buf;
        ssize_t got = read(fd, buf, want);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return mp_error_set(w->err, "cannot read %s for the archive: %s", path,
                                got < 0 ? strerror(errno) : "it became shorter");
        if (gz_put(w, buf, (size_t)got))
            return -1;
        done += (uint64_t)got;
    }
    static const char zeros[BLOCK];
    return gz_put(w, zeros, (BLOCK - size % BLOCK) % BLOCK);
}

static int add_dir(struct writer *w, int dirfd, const char *path, int depth);

/* The entry name of dirfd, archived as path. */
static int add_entry(struct writer *w, int dirfd, const char *name, const char *path,
                     int depth)
{
    int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        if (e == ELOOP || e == ENXIO)
            return 0;                    /* a link, a socket: left out */
        return mp_error_set(w->err, "cannot open %s for the archive: %s", path, strerror(e));
    }
    int rc = 0;
    if (S_ISDIR(st.st_mode) && depth > 0) {
        char dir[520];                  /* tar names a directory with its '/' */
        snprintf(dir, sizeof dir, "%s/", path);
        rc = header(w, dir, &st, '5', 0);
        if (rc == 0)
            rc = add_dir(w, fd, path, depth - 1);
        else
            close(fd);
        return rc;
    }
    if (S_ISREG(st.st_mode)) {
        uint64_t size = (uint64_t)st.st_size;
        if (size > w->left)
            rc = mp_error_set(w->err, "the files to archive are larger than the archive "
                              "may be (%llu MiB in all), at %s",
                              (unsigned long long)(w->max >> 20), path);
        else {
            w->left -= size;
            rc = header(w, path, &st, '0', size);
            if (rc == 0)
                rc = file_body(w, fd, path, size);
        }
    }
    close(fd);
    return rc;
}

/* Every entry of the open directory fd (closed here), under path. */
static int add_dir(struct writer *w, int fd, const char *path, int depth)
{
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return mp_error_set(w->err, "cannot list %s for the archive: %s", path,
                            strerror(errno));
    }
    int rc = 0;
    for (struct dirent *e; rc == 0 && (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char child[512];
        if ((size_t)snprintf(child, sizeof child, "%s/%s", path, e->d_name) >= sizeof child)
            rc = mp_error_set(w->err, "cannot archive %s/%s: its name is too long", path,
                              e->d_name);
        else
            rc = add_entry(w, dirfd(d), e->d_name, child, depth);
    }
    closedir(d);
    return rc;
}

int tar_gz_dir(int dirfd, const char *top, int outfd, uint64_t max_bytes,
               struct mp_error *err)
{
    int fd = dup(outfd);
    gzFile gz = fd >= 0 ? gzdopen(fd, "wb6") : NULL;
    if (!gz) {
        if (fd >= 0)
            close(fd);
        return mp_error_set(err, "cannot start the archive: %s", strerror(errno));
    }
    struct writer w = {gz, max_bytes, max_bytes, err};
    int rc = add_entry(&w, dirfd, top, top, TAR_GZ_DEPTH);
    static const char end[2 * BLOCK];      /* two zero blocks end a tar */
    if (rc == 0)
        rc = gz_put(&w, end, sizeof end);
    int zrc = gzclose(gz);
    if (rc == 0 && zrc != Z_OK)
        rc = mp_error_set(err, "cannot finish the archive (zlib error %d)", zrc);
    return rc;
}
