/* build_places.c - see lib/symbolize/build_places.h. */
#include "lib/symbolize/build_places.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The directory of files by build-id under a debug directory or a run. */
#define BY_BUILD_ID ".build-id"

static bool hex_id(const char *s)
{
    size_t n = strlen(s);
    if (n < 4 || n > 128 || n % 2)
        return false;
    return strspn(s, "0123456789abcdef") == n;
}

char *sym_map_files_name(int pid, uint64_t start, uint64_t end)
{
    char *out = NULL;
    if (asprintf(&out, "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, pid, start, end) < 0)
        return NULL;
    return out;
}

static char *by_id(const char *prefix, const char *dir, const char *id, const char *suffix)
{
    char *out = NULL;
    if (asprintf(&out, "%s%s/" BY_BUILD_ID "/%.2s/%s%s", prefix, dir, id, id + 2, suffix) < 0)
        return NULL;
    return out;
}

static void add(struct sym_build_place *out, size_t *n, char *path, bool nofollow, bool kept)
{
    if (path && *n < SYM_BUILD_PLACES_MAX)
        out[(*n)++] = (struct sym_build_place){path, nofollow, kept};
    else
        free(path);
}

static void describe(char *looked, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void describe(char *looked, size_t len, const char *fmt, ...)
{
    size_t n = strnlen(looked, len);
    if (n && n + 2 < len)
        n += (size_t)snprintf(looked + n, len - n, ", ");
    if (n >= len)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(looked + n, len - n, fmt, ap);
    va_end(ap);
}

size_t sym_build_places(const struct sym_build_query *q, struct sym_build_place *out,
                        char *looked, size_t looked_len)
{
    size_t n = 0;
    if (looked_len)
        looked[0] = '\0';
    if (!q->build_id || !hex_id(q->build_id))
        return 0;
    const char *id = q->build_id;
    if (q->kept_dir) {
        add(out, &n, by_id("", q->kept_dir, id, ""), true, true);
        describe(looked, looked_len, "the run directory %s", q->kept_dir);
    }
    add(out, &n, by_id("", q->debug_dir, id, ""), false, false);
    add(out, &n, by_id("", q->debug_dir, id, ".debug"), false, false);
    describe(looked, looked_len, "%s/" BY_BUILD_ID, q->debug_dir);
    if (q->pid && q->root) {
        add(out, &n, sym_map_files_name(q->pid, q->start, q->end), false, false);
        add(out, &n, by_id(q->root, q->debug_dir, id, ".debug"), true, false);
        describe(looked, looked_len, "process %d's own files", q->pid);
    }
    return n;
}

void sym_build_places_free(struct sym_build_place *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i].path);
}
