/* fuzz_cgroup_memory_dir.c - libFuzzer harness for finding a cgroup's
 * memory directory (lib/proc/cgroup_memory_dir.c): the input up to its
 * first NUL is a mountinfo text, the rest a /proc/PID/cgroup text.  What
 * is chosen must be NUL-terminated, relative, and free of "..". */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/proc/cgroup_memory_dir.h"

/* Whether a component of rel is "." or ".." or empty. */
static int climbs(const char *rel)
{
    for (const char *p = rel; *p;) {
        const char *slash = strchr(p, '/');
        size_t n = slash ? (size_t)(slash - p) : strlen(p);
        if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
            return 1;
        p = slash ? slash + 1 : p + n;
        if (slash && !*p)
            return 1;
    }
    return 0;
}

static void check_dir(const struct cgroup_dir *d)
{
    if (!memchr(d->mount, 0, sizeof d->mount) || !memchr(d->rel, 0, sizeof d->rel) ||
        !memchr(d->path, 0, sizeof d->path))
        abort();
    if (d->rel[0] == '/' || climbs(d->rel) || d->mount[0] != '/')
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    const char *nul = memchr(text, 0, size);
    size_t mlen = nul ? (size_t)(nul - text) : size;
    const char *cg = nul ? nul + 1 : text;
    size_t clen = nul ? size - mlen - 1 : size;
    struct cgroup_mounts m;
    cgroup_mounts_parse(text, mlen, &m);
    if ((m.v2.found && (m.v2.dir[0] != '/' || m.v2.root[0] != '/')) ||
        (m.v1_memory.found && m.v1_memory.dir[0] != '/'))
        abort();
    struct cgroup_memory_where w;
    char why[512];
    if (cgroup_memory_locate(cg, clen, &m, &w, why, sizeof why))
        check_dir(&w.memory);
    else if (!memchr(why, 0, sizeof why) || !why[0])
        abort();
    if (w.has_pressure)
        check_dir(&w.pressure);
    return 0;
}
