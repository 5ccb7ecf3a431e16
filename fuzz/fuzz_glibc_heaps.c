/* fuzz_glibc_heaps.c - libFuzzer harness for what ties glibc's arenas to
 * their heaps from a process's text and memory: the aligned anonymous
 * mappings of an smaps text (lib/proc/smaps_aligned.c), heap headers and
 * malloc_info figures made of the input's bytes matched
 * (lib/mallinfo/glibc_heaps.c), and RSS's parts with those heaps as a hint
 * (lib/proc/rss_account.c), and chunk headers made of the input's words
 * (lib/mallinfo/glibc_chunk.c).  Arenas measured hold no more than every
 * mapping's Rss; RSS's parts still add up; a chunk told fits where it was
 * said to be. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/mallinfo/glibc_chunk.h"
#include "lib/mallinfo/glibc_heaps.h"
#include "lib/proc/rss_account.h"
#include "lib/proc/smaps_aligned.h"

static uint64_t word(const uint8_t *data, size_t size, size_t at)
{
    uint64_t v = 0;
    if (size >= 8)
        memcpy(&v, data + (at % (size - 7)), 8);
    return v;
}

/* Headers and arenas made of the input: each heap's ar_ptr points into
 * one heap or another, sizes from the bytes. */
static void check_match(const struct smaps_aligned *sa, const uint8_t *data, size_t size)
{
    struct glibc_heap *h = calloc(sa->n ? sa->n : 1, sizeof *h);
    size_t narenas = size ? data[0] % 8 : 0;
    struct glibc_arena_info arenas[8];
    uint64_t total = sa->brk_rss;
    for (size_t i = 0; i < sa->n; i++) {
        const struct smaps_aligned_map *m = &sa->v[i];
        uint64_t w = word(data, size, i * 8);
        const struct smaps_aligned_map *owner = &sa->v[(w >> 8) % sa->n];
        h[i] = (struct glibc_heap){.start = m->start, .end = m->end, .rss = m->rss,
                                   .read = w & 1, .ar_ptr = owner->start + (w & 0x30),
                                   .size = (w >> 16) & 0xffffff};
        total += m->rss;
    }
    for (size_t i = 0; i < narenas; i++)
        arenas[i] = (struct glibc_arena_info){.nr = (unsigned)i,
                                              .system_current = (word(data, size, i * 3) >> 16) & 0xffffff};
    struct glibc_malloc_info mi = {.arenas = arenas, .narenas = narenas};
    struct glibc_heaps_result r;
    if (glibc_heaps_match(h, sa->n, &mi, sa->have_brk, sa->brk_rss, &r) == 0) {
        uint64_t sum = r.unmatched_rss;
        for (size_t i = 0; i < narenas; i++)
            sum += r.arena[i].measured ? r.arena[i].resident : 0;
        if (sum > total || r.nstarts > sa->n)
            abort();
        glibc_heaps_result_free(&r);
    }
    free(h);
}

/* Chunk headers of the input's words: an mmapped chunk fits its room, a
 * top chunk ends where its heap ends. */
static void check_chunks(const uint8_t *data, size_t size)
{
    for (size_t i = 0; i + 40 <= size; i += 40) {
        uint64_t w[5];
        memcpy(w, data + i, sizeof w);
        uint64_t len = glibc_mmapped_chunk_len(w, w[2]);
        if (len > w[2] || (len && len % 4096))
            abort();
        len = glibc_top_chunk_len(w[2], w[1], w[3], w[4]);
        if (len && (w[2] < w[3] || w[2] + len != w[3] + w[4]))
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_chunks(data, size);
    const char *text = (const char *)data;
    struct smaps_aligned sa;
    if (smaps_aligned_read(text, size, 0x1000, &sa) != 0)
        return 0;
    for (size_t i = 0; i < sa.n; i++)
        if (sa.v[i].start & 0xfff || sa.v[i].end <= sa.v[i].start)
            abort();
    check_match(&sa, data, size);
    uint64_t *starts = malloc((sa.n ? sa.n : 1) * sizeof *starts);
    for (size_t i = 0; starts && i < sa.n; i++)
        starts[i] = sa.v[i].start;
    struct rss_account acct;
    if (starts && rss_account_smaps_heaps(text, size, NULL, 0, starts, sa.n, &acct) == 0) {
        uint64_t sum = acct.sampler + acct.main_stack + acct.thread_stacks + acct.unseen_stacks +
                       acct.anon + acct.shared + acct.other;
        for (size_t i = 0; i < acct.nfiles; i++)
            sum += acct.files[i].rss;
        if (sum != acct.rss)
            abort();
        rss_account_free(&acct);
    }
    free(starts);
    smaps_aligned_free(&sa);
    return 0;
}
