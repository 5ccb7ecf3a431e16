/* cgroup_memory.c - see lib/proc/cgroup_memory.h. */
#include "lib/proc/cgroup_memory.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/base/file_read.h"
#include "lib/base/safe_open.h"

/* A cgroup file is a few lines; memory.stat of v1 the longest (~2 KiB). */
#define CGROUP_FILE_MAX (64 << 10)

/* The text of file in dirfd's directory, opened without following a link
 * and only if regular; NULL when absent. */
static char *cg_file(int dirfd, const char *file, size_t *len)
{
    int fd = safe_open_regular(dirfd, file, true, NULL);
    if (fd < 0)
        return NULL;
    char *text = file_read_fd(fd, CGROUP_FILE_MAX, len);
    close(fd);
    return text;
}

/* The values of keys in file, each into its slot (CGROUP_ABSENT when the
 * file or the key is not there): one read of the file for all. */
static void cg_keys(int dirfd, const char *file, size_t n, const char *const *keys,
                    uint64_t *const *slots)
{
    size_t len;
    char *text = cg_file(dirfd, file, &len);
    for (size_t i = 0; i < n; i++)
        if (!text || !procmem_field(text, len, keys[i], slots[i]))
            *slots[i] = CGROUP_ABSENT;
    free(text);
}

/* A file holding one limit or number; CGROUP_ABSENT when absent. */
static uint64_t cg_limit(int dirfd, const char *file, bool *unlimited)
{
    size_t len;
    char *text = cg_file(dirfd, file, &len);
    uint64_t v;
    bool dummy, ok = text && procmem_cgroup_limit(text, len, &v, unlimited ? unlimited : &dummy);
    free(text);
    return ok ? v : CGROUP_ABSENT;
}

static void read_v2(int fd, struct cgroup_memory *c)
{
    c->current = cg_limit(fd, "memory.current", NULL);
    c->max = cg_limit(fd, "memory.max", &c->max_unlimited);
    c->high = cg_limit(fd, "memory.high", &c->high_unlimited);
    static const char *const stat[] = {"anon", "file"};
    cg_keys(fd, "memory.stat", 2, stat, (uint64_t *const[]){&c->anon, &c->file});
    static const char *const events[] = {"low", "high", "max", "oom", "oom_kill",
                                         "oom_group_kill"};
    cg_keys(fd, "memory.events", 6, events,
            (uint64_t *const[]){&c->ev_low, &c->ev_high, &c->ev_max, &c->ev_oom,
                                &c->ev_oom_kill, &c->ev_oom_group_kill});
}

static void read_v1(int fd, struct cgroup_memory *c)
{
    c->current = cg_limit(fd, "memory.usage_in_bytes", NULL);
    c->max = cg_limit(fd, "memory.limit_in_bytes", &c->max_unlimited);
    static const char *const stat[] = {"total_rss", "total_cache"};
    cg_keys(fd, "memory.stat", 2, stat, (uint64_t *const[]){&c->anon, &c->file});
    c->ev_max = cg_limit(fd, "memory.failcnt", NULL);
    static const char *const oom[] = {"oom_kill", "under_oom"};
    cg_keys(fd, "memory.oom_control", 2, oom, (uint64_t *const[]){&c->ev_oom_kill,
                                                                    &c->under_oom});
}

static void read_pressure(int fd, struct cgroup_memory *c)
{
    size_t len;
    char *text = cg_file(fd, "memory.pressure", &len);
    c->has_pressure = text && procmem_psi_line(text, len, "some", &c->some);
    c->has_full = c->has_pressure && procmem_psi_line(text, len, "full", &c->full);
    free(text);
}

static bool mounts_read(struct cgroup_mounts *m, char *why, size_t whylen)
{
    int fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
    size_t len;
    char *text = fd >= 0 ? file_read_fd(fd, 4 << 20, &len) : NULL;
    if (fd >= 0)
        close(fd);
    if (!text) {
        snprintf(why, whylen, "cannot read /proc/self/mountinfo (is /proc mounted?)");
        return false;
    }
    cgroup_mounts_parse(text, len, m);
    free(text);
    return true;
}

static void absent_all(struct cgroup_memory *out)
{
    struct cgroup_memory_where w = out->where;
    memset(out, 0, sizeof *out);
    out->where = w;
    out->current = out->max = out->high = out->anon = out->file = CGROUP_ABSENT;
    out->ev_low = out->ev_high = out->ev_max = out->ev_oom = out->ev_oom_kill =
        out->ev_oom_group_kill = out->under_oom = CGROUP_ABSENT;
}

/* Whether the cgroup2 hierarchy whose top is topfd has the memory
 * controller at all (its cgroup.controllers names it): on a hybrid host
 * it is bound to v1 and absent from v2; -1 when that cannot be read. */
static int v2_has_memory(int topfd)
{
    size_t len;
    char *text = topfd >= 0 ? cg_file(topfd, "cgroup.controllers", &len) : NULL;
    if (!text)
        return -1;
    int has = 0;
    for (char *save = NULL, *w = strtok_r(text, " \n", &save); w && !has;
         w = strtok_r(NULL, " \n", &save))
        has = strcmp(w, "memory") == 0;
    free(text);
    return has;
}

int cgroup_memory_read_dirs(struct cgroup_memory *out, int memfd, int pressurefd, int topfd,
                            char *why, size_t whylen)
{
    absent_all(out);
    if (out->where.memory.version == CGROUP_V1)
        read_v1(memfd, out);
    else
        read_v2(memfd, out);
    if (pressurefd >= 0)
        read_pressure(pressurefd, out);
    if (out->current != CGROUP_ABSENT)
        return 0;
    const struct cgroup_dir *d = &out->where.memory;
    if (strcmp(d->path, "/") == 0)
        snprintf(why, whylen, "the process is in the root cgroup, which has no memory "
                 "usage file: it has no limit but the machine's");
    else if (d->version == CGROUP_V2 && v2_has_memory(topfd) == 0)
        snprintf(why, whylen, "no memory controller in %.200s/%.300s: the cgroup v2 "
                 "hierarchy mounted on %.200s has none (its cgroup.controllers does not "
                 "list memory; a host that binds it to cgroup v1 mounts that elsewhere)",
                 d->mount, d->rel, d->mount);
    else
        snprintf(why, whylen, "no memory controller in %.200s/%.300s (not enabled in its "
                 "parent's cgroup.subtree_control?)", d->mount, d->rel);
    return -1;
}

int cgroup_memory_read(const char *cgroup_text, size_t len, struct cgroup_memory *out,
                       char *why, size_t whylen)
{
    memset(out, 0, sizeof *out);
    absent_all(out);
    struct cgroup_mounts m;
    if (!mounts_read(&m, why, whylen) ||
        !cgroup_memory_locate(cgroup_text, len, &m, &out->where, why, whylen))
        return -1;
    int fd = cgroup_dir_open(&out->where.memory, why, whylen);
    if (fd < 0)
        return -1;
    char pwhy[256];
    int pfd = out->where.has_pressure
              ? cgroup_dir_open(&out->where.pressure, pwhy, sizeof pwhy) : -1;
    int top = -1;
    if (out->where.memory.version == CGROUP_V2) {
        struct cgroup_dir t = out->where.memory;
        t.rel[0] = 0;
        top = cgroup_dir_open(&t, pwhy, sizeof pwhy);
    }
    int rc = cgroup_memory_read_dirs(out, fd, pfd, top, why, whylen);
    close(fd);
    if (pfd >= 0)
        close(pfd);
    if (top >= 0)
        close(top);
    return rc;
}

uint64_t cgroup_memory_headroom(const struct cgroup_memory *c)
{
    if (c->current == CGROUP_ABSENT || c->max == CGROUP_ABSENT || c->max_unlimited)
        return CGROUP_ABSENT;
    return c->max > c->current ? c->max - c->current : 0;
}

uint64_t cgroup_host_oom_kills(void)
{
    int fd = open("/proc/vmstat", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return CGROUP_ABSENT;
    size_t len;
    char *text = file_read_fd(fd, 1 << 20, &len);
    close(fd);
    uint64_t v;
    bool ok = text && procmem_field(text, len, "oom_kill", &v);
    free(text);
    return ok ? v : CGROUP_ABSENT;
}
