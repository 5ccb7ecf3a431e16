/* thp_scan.c - see session/thp_scan.h.  The process runs on while it is
 * read: a block changed meanwhile is counted as it was read. */
#include "session/thp_scan.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attach/memory.h"

#define PAGE 4096u
#define BLOCK ((uint64_t)2 << 20)
#define PAGES (BLOCK / PAGE)
#define PM_PRESENT ((uint64_t)1 << 63)
#define PM_PFN(e) ((e) & (((uint64_t)1 << 55) - 1))

uint64_t thp_zero_bytes(const unsigned char *block, size_t len)
{
    uint64_t zero = 0;
    for (size_t p = 0; p + PAGE <= len; p += PAGE) {
        const uint64_t *w = (const uint64_t *)(const void *)(block + p);
        uint64_t any = 0;
        for (size_t i = 0; i < PAGE / sizeof *w && !any; i++)
            any |= w[i];
        if (!any)
            zero += PAGE;
    }
    return zero;
}

/* Whether pagemap says the block at addr is wholly resident and, where it
 * gives frame numbers (CAP_SYS_ADMIN), one huge page: 512 frames in a row
 * from a 2 MiB-aligned one. */
static bool block_huge(int pm, uint64_t addr, bool *frames)
{
    uint64_t e[PAGES];
    if (pread(pm, e, sizeof e, (off_t)(addr / PAGE * sizeof *e)) != (ssize_t)sizeof e)
        return false;
    uint64_t pfn0 = PM_PFN(e[0]);
    *frames = *frames || pfn0;
    if (pfn0 && pfn0 % PAGES)
        return false;
    for (size_t i = 0; i < PAGES; i++)
        if (!(e[i] & PM_PRESENT) || (pfn0 && PM_PFN(e[i]) != pfn0 + i))
            return false;
    return true;
}

/* One mapping's blocks; false when its memory cannot be read. */
static bool scan_mapping(pid_t pid, int pm, const struct rss_mapping *m, unsigned char *buf,
                         struct diagnose_thp *out)
{
    uint64_t zero = 0;
    for (uint64_t b = (m->start + BLOCK - 1) & ~(BLOCK - 1); b + BLOCK <= m->end; b += BLOCK) {
        if (out->scanned >= THP_SCAN_MAX) {
            out->capped = true;
            break;
        }
        if (!block_huge(pm, b, &out->frames))
            continue;
        struct mp_error err;
        if (remote_read(pid, b, buf, BLOCK, &err) < 0)
            return false;
        out->scanned += BLOCK;
        zero += thp_zero_bytes(buf, BLOCK);
    }
    out->zero += zero < m->anon_huge ? zero : m->anon_huge;
    return true;
}

void thp_scan(struct session *s, const struct rss_account *r, struct diagnose_thp *out)
{
    memset(out, 0, sizeof *out);
    if (!r->anon_huge) {
        out->known = true;
        return;
    }
    char dir[96], path[128];
    target_proc_dir(s->target, dir, sizeof dir);
    snprintf(path, sizeof path, "%s/pagemap", dir);
    int pm = open(path, O_RDONLY | O_CLOEXEC);
    unsigned char *buf = pm >= 0 ? malloc(BLOCK) : NULL;
    bool ok = buf != NULL;
    for (size_t i = 0; ok && i < r->nmaps; i++) {
        const struct rss_mapping *m = &r->maps[i];
        if (m->anon_huge && m->part == RSS_PART_ANON) {
            out->huge += m->anon_huge;
            ok = scan_mapping(target_pid(s->target), pm, m, buf, out);
        }
    }
    out->known = ok;
    free(buf);
    if (pm >= 0)
        close(pm);
}
