/* sym_debug.c - locating and verifying separate debug files (see
 * sym_debug.h for the search order). */
#include "lib/sym_debug.h"
#include "lib/safe_open.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

enum verdict { NOT_FOUND, MATCHES, DIFFERS };

/* .gnu_debuglink's CRC is the plain CRC-32 of the whole file, the same
 * polynomial as zlib's crc32(). */
static bool file_crc32(int fd, uint32_t *crc)
{
    unsigned char buf[65536];
    uLong c = crc32(0L, Z_NULL, 0);
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0)
        c = crc32(c, buf, (uInt)n);
    *crc = (uint32_t)c;
    return n == 0;
}

static enum verdict check_candidate(const struct sym_debug_search *q,
                                    const char *path, bool by_crc)
{
    /* Beside the target's objects: its user's files, maybe a FIFO or a
     * link to a device. */
    int fd = safe_open_regular(AT_FDCWD, path, false, NULL);
    if (fd < 0)
        return NOT_FOUND;
    uint8_t id[64];
    size_t len = 0;
    enum verdict v = DIFFERS;
    if (elf_object_read_build_id(fd, id, sizeof id, &len) == 0) {
        /* Build-ids, when both sides have one, are cheaper and stricter
         * than the CRC of a possibly huge file. */
        if (q->obj->build_id_len && len)
            v = len == q->obj->build_id_len &&
                memcmp(id, q->obj->build_id, len) == 0 ? MATCHES : DIFFERS;
        else if (by_crc) {
            uint32_t crc;
            lseek(fd, 0, SEEK_SET);
            v = file_crc32(fd, &crc) && crc == q->obj->debuglink_crc ? MATCHES : DIFFERS;
        }
    }
    close(fd);
    return v;
}

/* Tries one candidate; returns its malloc'd path when it matches and
 * records the first mismatch. */
static char *try_path(const struct sym_debug_search *q, char *path, bool by_crc,
                      char **mismatch)
{
    if (!path)
        return NULL;
    if (strcmp(path, q->opened_path) == 0) { /* a debuglink naming itself */
        free(path);
        return NULL;
    }
    enum verdict v = check_candidate(q, path, by_crc);
    if (v == MATCHES)
        return path;
    if (v == DIFFERS && mismatch && !*mismatch)
        *mismatch = path;
    else
        free(path);
    return NULL;
}

static char *join(const char *a, const char *b, const char *c, const char *d)
{
    char *out = NULL;
    if (asprintf(&out, "%s%s%s%s", a ? a : "", b ? b : "", c ? c : "", d ? d : "") < 0)
        return NULL;
    return out;
}

static bool has_root(const struct sym_debug_search *q)
{
    return q->root && *q->root;
}

static char *by_build_id(const struct sym_debug_search *q, char **mismatch)
{
    const struct elf_object *o = q->obj;
    if (o->build_id_len < 2)
        return NULL;
    char hex[2 * sizeof o->build_id + 1];
    elf_object_build_id_hex(o, hex, sizeof hex);
    char rest[sizeof hex + 8];
    snprintf(rest, sizeof rest, "/%s.debug", hex + 2);
    char dir[16];
    snprintf(dir, sizeof dir, "/.build-id/%.2s", hex);
    /* The local debug directory first, then the one inside the root (a
     * container may ship its own). */
    char *hit = try_path(q, join(q->debug_dir, dir, rest, NULL), false, mismatch);
    if (!hit && has_root(q))
        hit = try_path(q, join(q->root, q->debug_dir, dir, rest), false, mismatch);
    return hit;
}

static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? strndup(path, (size_t)(slash - path)) : strdup(".");
}

static char *by_debuglink(const struct sym_debug_search *q, char **mismatch)
{
    const char *link = q->obj->debuglink;
    if (!link || !*link)
        return NULL;
    char *dir = dir_of(q->opened_path), *dir_in_root = dir_of(q->path_in_root);
    char *hit = NULL;
    if (dir && dir_in_root) {
        hit = try_path(q, join(dir, "/", link, NULL), true, mismatch);
        if (!hit)
            hit = try_path(q, join(dir, "/.debug/", link, NULL), true, mismatch);
        if (!hit)
            hit = try_path(q, join(q->debug_dir, dir_in_root, "/", link), true, mismatch);
        if (!hit && has_root(q)) {
            char *root_debug = join(q->root, q->debug_dir, NULL, NULL);
            hit = try_path(q, join(root_debug, dir_in_root, "/", link), true, mismatch);
            free(root_debug);
        }
    }
    free(dir);
    free(dir_in_root);
    return hit;
}

char *sym_debug_find(const struct sym_debug_search *q, char **mismatch)
{
    if (mismatch)
        *mismatch = NULL;
    char *hit = by_build_id(q, mismatch);
    if (!hit)
        hit = by_debuglink(q, mismatch);
    if (hit && mismatch) {
        free(*mismatch);
        *mismatch = NULL;
    }
    return hit;
}
