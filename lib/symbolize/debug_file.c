/* debug_file.c - locating, opening and verifying separate debug files (see
 * lib/symbolize/debug_file.h for the search order).  Used by the symbolizer and by the
 * attach layer's search for a stripped jemalloc: one lookup for both. */
#include "lib/symbolize/debug_file.h"
#include "lib/base/safe_open.h"
#include "lib/symbolize/debuginfod.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

enum verdict { NOT_FOUND, MATCHES, DIFFERS };

static bool has_root(const struct sym_debug_search *q)
{
    return q->root && *q->root;
}

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

/* A candidate the target's user may have placed (beside the object, or
 * inside the target's root), opened so that it cannot steer root's memprof
 * to another file: under the root, every symlink resolves inside that root
 * (openat2 RESOLVE_IN_ROOT: an absolute link would otherwise name the host's
 * file); a final symlink is never followed; and only a regular file is
 * opened for reading, checked through an O_PATH descriptor first, so that
 * no device (a watchdog, a tape) or FIFO is ever opened. */
static int open_untrusted(const struct sym_debug_search *q, const char *path)
{
    return safe_open_in_root(has_root(q) ? q->root : NULL, path, true, NULL);
}

/* Opens the candidate and judges it; on MATCHES *fdp keeps it open, so the
 * file read later is the very file checked. */
static enum verdict check_candidate(const struct sym_debug_search *q,
                                    const char *path, bool by_crc, bool untrusted,
                                    int *fdp)
{
    int fd = untrusted ? open_untrusted(q, path)
                       : open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
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
    if (v == MATCHES) {
        lseek(fd, 0, SEEK_SET);
        *fdp = fd;
    } else {
        close(fd);
    }
    return v;
}

/* The outcome of a search: the open matching file and its path. */
struct hit {
    int fd;
    char *path;
};

/* Tries one candidate; on a match fills *h (path malloc'd, fd open) and
 * returns true; records the first mismatch. */
static bool try_path(const struct sym_debug_search *q, char *path, bool by_crc,
                     bool untrusted, char **mismatch, struct hit *h)
{
    if (!path)
        return false;
    if (strcmp(path, q->opened_path) == 0) { /* a debuglink naming itself */
        free(path);
        return false;
    }
    enum verdict v = check_candidate(q, path, by_crc, untrusted, &h->fd);
    if (v == MATCHES) {
        h->path = path;
        return true;
    }
    if (v == DIFFERS && mismatch && !*mismatch)
        *mismatch = path;
    else
        free(path);
    return false;
}

static char *join(const char *a, const char *b, const char *c, const char *d)
{
    char *out = NULL;
    if (asprintf(&out, "%s%s%s%s", a ? a : "", b ? b : "", c ? c : "", d ? d : "") < 0)
        return NULL;
    return out;
}

char *sym_debug_build_id_path(const char *debug_dir, const struct elf_object *o)
{
    if (o->build_id_len < 2)
        return NULL;
    char hex[2 * sizeof o->build_id + 1];
    elf_object_build_id_hex(o, hex, sizeof hex);
    char rest[sizeof hex + 24];
    snprintf(rest, sizeof rest, "/.build-id/%.2s/%s.debug", hex, hex + 2);
    return join(debug_dir, rest, NULL, NULL);
}

static bool by_build_id(const struct sym_debug_search *q, char **mismatch, struct hit *h)
{
    const struct elf_object *o = q->obj;
    char *local = sym_debug_build_id_path(q->debug_dir, o);
    if (!local)
        return false;
    /* A run directory's kept copy first (what the run was named from),
     * then the local debug directory (root's, trusted), then the one inside
     * the root (a container may ship its own; its user may write there). */
    bool found = false;
    if (q->kept_dir) {
        char *kept = sym_debug_build_id_path(q->kept_dir, o);
        found = try_path(q, kept, false, true, mismatch, h);
    }
    if (found) {
        free(local);
        return true;
    }
    found = try_path(q, local, false, false, mismatch, h);
    if (!found && has_root(q)) {
        char *in_root = sym_debug_build_id_path(q->debug_dir, o);
        char *p = in_root ? join(q->root, in_root, NULL, NULL) : NULL;
        free(in_root);
        found = try_path(q, p, false, true, mismatch, h);
    }
    return found;
}

static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? strndup(path, (size_t)(slash - path)) : strdup(".");
}

/* A debuglink names a file, not a path: one with a '/' could climb out of
 * the directories searched. */
static bool plain_file_name(const char *link)
{
    return *link && !strchr(link, '/') && strcmp(link, ".") && strcmp(link, "..");
}

static bool by_debuglink(const struct sym_debug_search *q, char **mismatch, struct hit *h)
{
    const char *link = q->obj->debuglink;
    if (!link || !plain_file_name(link))
        return false;
    char *dir = dir_of(q->opened_path), *dir_in_root = dir_of(q->path_in_root);
    bool found = false;
    if (dir && dir_in_root) {
        /* Beside the object: the object's owner chose what lies there. */
        found = try_path(q, join(dir, "/", link, NULL), true, true, mismatch, h) ||
                try_path(q, join(dir, "/.debug/", link, NULL), true, true, mismatch, h) ||
                try_path(q, join(q->debug_dir, dir_in_root, "/", link), true, false,
                         mismatch, h);
        if (!found && has_root(q)) {
            char *root_debug = join(q->root, q->debug_dir, NULL, NULL);
            found = try_path(q, join(root_debug, dir_in_root, "/", link), true, true,
                             mismatch, h);
            free(root_debug);
        }
    }
    free(dir);
    free(dir_in_root);
    return found;
}

/* After every local place: a download is slow and the network may be
 * off.  The file comes into root's own cache (trusted), and is checked
 * against the build-id like any other candidate: a server may be wrong. */
static bool by_debuginfod(const struct sym_debug_search *q, char **mismatch, struct hit *h)
{
    if (q->obj->build_id_len == 0 || !sym_debuginfod_enabled())
        return false;
    char *why = NULL;
    char *path = sym_debuginfod_fetch(q->obj->build_id, q->obj->build_id_len,
                                      SYM_DEBUGINFOD_DEBUGINFO, &why);
    bool found = try_path(q, path, false, false, mismatch, h);
    if (q->remote_note && !found && why && !*q->remote_note)
        *q->remote_note = why;
    else
        free(why);
    return found;
}

int sym_debug_open(const struct sym_debug_search *q, char **path, char **mismatch)
{
    if (mismatch)
        *mismatch = NULL;
    if (q->remote_note)
        *q->remote_note = NULL;
    struct hit h = { -1, NULL };
    bool found = by_build_id(q, mismatch, &h) || by_debuglink(q, mismatch, &h) ||
                 by_debuginfod(q, mismatch, &h);
    if (found && mismatch) {
        free(*mismatch);
        *mismatch = NULL;
    }
    *path = found ? h.path : NULL;
    return found ? h.fd : -1;
}
