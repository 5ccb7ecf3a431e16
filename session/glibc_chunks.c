/* glibc_chunks.c - see session/glibc_chunks.h. */
#include "session/glibc_chunks.h"

#include <stdbool.h>
#include <string.h>

#include "attach/memory.h"
#include "lib/mallinfo/glibc_chunk.h"

static bool listed(const uint64_t *v, size_t n, uint64_t start)
{
    for (size_t i = 0; i < n; i++)
        if (v[i] == start)
            return true;
    return false;
}

/* A mapping that may be a chunk: private anonymous memory accounted as
 * such, resident, not a heap of the arenas. */
static bool candidate(const struct rss_mapping *m, const uint64_t *heaps, size_t n)
{
    return m->part == RSS_PART_ANON && !m->brk && m->path[0] == 0 && m->rss &&
           m->end > m->start && !listed(heaps, n, m->start);
}

/* The chunks m holds when it is made of chunks back to back and nothing
 * else (its Rss is one figure: a mapping part chunk, part not, is not
 * split), else 0. */
static unsigned walk(pid_t pid, const struct rss_mapping *m, unsigned *reads)
{
    uint64_t at = m->start;
    unsigned found = 0;
    while (at < m->end && *reads < GLIBC_CHUNKS_READ_MAX) {
        uint64_t hdr[2], len;
        struct mp_error err;
        (*reads)++;
        if (remote_read(pid, at, hdr, sizeof hdr, &err) < 0 ||
            !(len = glibc_mmapped_chunk_len(hdr, m->end - at)))
            return 0;
        at += len;
        found++;
    }
    return at == m->end ? found : 0;
}

uint64_t glibc_chunks_resident(pid_t pid, const struct rss_account *r,
                               const uint64_t *heap_starts, size_t n, unsigned *chunks)
{
    uint64_t rss = 0;
    unsigned reads = 0;
    *chunks = 0;
    for (size_t i = 0; i < r->nmaps && reads < GLIBC_CHUNKS_READ_MAX; i++) {
        const struct rss_mapping *m = &r->maps[i];
        if (!candidate(m, heap_starts, n))
            continue;
        unsigned found = walk(pid, m, &reads);
        if (found) {
            rss += m->rss;
            *chunks += found;
        }
    }
    return rss;
}
