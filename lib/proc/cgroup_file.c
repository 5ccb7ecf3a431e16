/* cgroup_file.c - /proc/PID/cgroup lines into the hierarchies memprof
 * keeps (cgroup_file.h).  A line of another shape, one with a NUL, or one
 * whose path does not fit is skipped and counted, never cut. */
#include "lib/proc/cgroup_file.h"

#include <string.h>

static const char *const role_names[CGROUP_NROLES] = {
    [CGROUP_MEMORY] = "memory", [CGROUP_PIDS] = "pids",
    [CGROUP_SYSTEMD] = "name=systemd", [CGROUP_UNIFIED] = "unified",
};

const char *cgroup_role_name(enum cgroup_role r)
{
    return r < CGROUP_NROLES ? role_names[r] : "?";
}

const char *cgroup_layout_name(enum cgroup_layout l)
{
    switch (l) {
    case CGROUP_LAYOUT_V2: return "v2";
    case CGROUP_LAYOUT_V1: return "v1";
    case CGROUP_LAYOUT_HYBRID: return "hybrid";
    default: return NULL;
    }
}

/* Whether the comma-separated list (len bytes) holds the name. */
static bool list_has(const char *list, size_t len, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list, *end = list + len; p < end;) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        const char *e = comma ? comma : end;
        if ((size_t)(e - p) == n && memcmp(p, name, n) == 0)
            return true;
        p = e + 1;
    }
    return false;
}

/* The role of a v1 line's controller list, or CGROUP_NROLES for one
 * memprof does not keep (cpu, blkio...). */
static enum cgroup_role v1_role(const char *ctl, size_t len)
{
    if (list_has(ctl, len, "memory"))
        return CGROUP_MEMORY;
    if (list_has(ctl, len, "pids"))
        return CGROUP_PIDS;
    if (list_has(ctl, len, "name=systemd"))
        return CGROUP_SYSTEMD;
    return CGROUP_NROLES;
}

/* One line (len bytes, no newline): true when it has the file's shape;
 * *v2 says which kind. */
static bool take_line(const char *line, size_t len, struct cgroup_file *out, bool *v2)
{
    if (memchr(line, '\0', len))
        return false;       /* and so nothing below may read it as a string */
    size_t id = 0;
    while (id < len && line[id] >= '0' && line[id] <= '9')
        id++;
    if (id == 0 || id > 10 || id >= len || line[id] != ':')
        return false;
    const char *ctl = line + id + 1, *end = line + len;
    const char *colon = memchr(ctl, ':', (size_t)(end - ctl));
    if (!colon || colon + 1 >= end || colon[1] != '/')
        return false;
    const char *path = colon + 1;
    size_t ctl_len = (size_t)(colon - ctl), path_len = (size_t)(end - path);
    *v2 = id == 1 && line[0] == '0';
    if (*v2 != (ctl_len == 0) || path_len >= CGROUP_PATH_MAX)
        return false;       /* "0:memory:" or "3::" are no kernel's lines */
    enum cgroup_role r = *v2 ? CGROUP_UNIFIED : v1_role(ctl, ctl_len);
    if (r < CGROUP_NROLES && !out->has[r]) {
        memcpy(out->path[r], path, path_len);
        out->path[r][path_len] = '\0';
        out->has[r] = true;
    }
    return true;
}

int cgroup_file_parse(const char *text, size_t len, struct cgroup_file *out,
                      struct mp_error *err)
{
    memset(out, 0, sizeof *out);
    if (len > CGROUP_TEXT_MAX)
        len = CGROUP_TEXT_MAX;
    bool v1 = false, v2 = false;
    const char *p = text, *end = text + len;
    for (unsigned lines = 0; p < end && lines < CGROUP_LINES_MAX; lines++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *e = nl ? nl : end;
        bool is_v2;
        if (take_line(p, (size_t)(e - p), out, &is_v2)) {
            v2 |= is_v2;
            v1 |= !is_v2;
        } else if (e > p) {
            out->bad_lines++;
        }
        p = nl ? nl + 1 : end;
    }
    out->layout = v1 && v2 ? CGROUP_LAYOUT_HYBRID : v1 ? CGROUP_LAYOUT_V1
                : v2 ? CGROUP_LAYOUT_V2 : CGROUP_LAYOUT_NONE;
    if (out->layout == CGROUP_LAYOUT_NONE)
        return mp_error_set(err, "not a /proc/PID/cgroup text: no line of the shape "
                            "ID:CONTROLLERS:/PATH");
    return 0;
}
