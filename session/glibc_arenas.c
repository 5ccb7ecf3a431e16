/* glibc_arenas.c - glibc's arenas as rows of session/heap_arenas.h:
 * malloc_info's figures per arena (in use, free), each arena's resident
 * bytes measured from the mappings that hold it (the main arena's [heap];
 * a thread arena's HEAP_MAX_SIZE-aligned heaps, tied to it by the header
 * glibc writes at each heap's start: lib/mallinfo/glibc_heaps.h), and the
 * chunks mmapped on their own.  The headers are read with
 * process_vm_readv, without stopping the process: a heap that changes
 * meanwhile is at worst left unmatched. */
#include "session/heap_arenas.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attach/memory.h"
#include "lib/mallinfo/glibc_chunk.h"
#include "lib/mallinfo/glibc_heaps.h"
#include "lib/proc/smaps_aligned.h"

/* The aligned mappings, each with its header read where it can be. */
static struct glibc_heap *heaps_read(struct session *s, const struct smaps_aligned *sa)
{
    struct glibc_heap *h = calloc(sa->n ? sa->n : 1, sizeof *h);
    for (size_t i = 0; h && i < sa->n; i++) {
        uint64_t hdr[4];           /* ar_ptr, prev, size, mprotect_size */
        struct mp_error err;
        h[i] = (struct glibc_heap){.start = sa->v[i].start, .end = sa->v[i].end,
                                   .rss = sa->v[i].rss};
        if (remote_read(target_pid(s->target), h[i].start, hdr, sizeof hdr, &err) == 0) {
            h[i].read = true;
            h[i].ar_ptr = hdr[0];
            h[i].size = hdr[2];
        }
    }
    return h;
}

/* The heap of h that holds addr, or NULL. */
static const struct glibc_heap *heap_holding(const struct glibc_heap *h, size_t n, uint64_t addr)
{
    for (size_t i = 0; i < n; i++)
        if (h[i].read && addr >= h[i].start && addr < h[i].end)
            return &h[i];
    return NULL;
}

/* Each thread arena's top chunk (its arena is in the first heap, which
 * its ar_ptr points into), measured where the pointer and the chunk's
 * size agree with the heap's header. */
static void thread_tops(struct session *s, const struct glibc_heap *h, size_t n,
                        struct heap_arenas *out)
{
    pid_t pid = target_pid(s->target);
    for (size_t i = 0; i < n; i++) {
        uint64_t top, size[2];
        struct mp_error err;
        if (!h[i].read || h[i].ar_ptr < h[i].start || h[i].ar_ptr >= h[i].end ||
            remote_read(pid, h[i].ar_ptr + GLIBC_ARENA_TOP_OFFSET, &top, sizeof top, &err))
            continue;
        const struct glibc_heap *in = heap_holding(h, n, top);
        uint64_t len = in && in->ar_ptr == h[i].ar_ptr &&
                       remote_read(pid, top, size, sizeof size, &err) == 0
                       ? glibc_top_chunk_len(top, size[1], in->start, in->size) : 0;
        out->thread_tops += len;
        out->nthread_tops += len > 0;
        if (len > GLIBC_TRIM_THRESHOLD_DEFAULT)
            out->thread_tops_over += len - GLIBC_TRIM_THRESHOLD_DEFAULT;
    }
}

/* Tie each arena to its mappings: 0, or -1 (out of memory, or smaps
 * unreadable: then said in out->note and r left empty). */
static int measure(struct session *s, const struct glibc_malloc_info *mi, const char *text,
                   size_t len, struct glibc_heaps_result *r, struct heap_arenas *out)
{
    struct smaps_aligned sa;
    memset(r, 0, sizeof *r);
    if (!text) {
        snprintf(out->note, sizeof out->note, "the arenas' resident bytes are not measured: "
                 "/proc/%d/smaps cannot be read", (int)target_pid(s->target));
        return 0;
    }
    int rc = smaps_aligned_read(text, len, GLIBC_HEAP_ALIGN, &sa);
    if (rc)
        return -1;
    struct glibc_heap *h = heaps_read(s, &sa);
    rc = h ? glibc_heaps_match(h, sa.n, mi, sa.have_brk, sa.brk_rss, r) : -1;
    if (rc == 0)
        thread_tops(s, h, sa.n, out);
    if (rc == 0 && sa.cut)
        snprintf(out->note, sizeof out->note, "more than %u aligned anonymous mappings: "
                 "the heaps beyond were not tied to their arenas", SMAPS_ALIGNED_MAX);
    free(h);
    smaps_aligned_free(&sa);
    return rc;
}

static int arena_row(struct heap_arenas *out, size_t i, const struct glibc_arena_info *a,
                     const struct glibc_arena_rss *m)
{
    char name[32];
    snprintf(name, sizeof name, i ? "%zu" : "%zu (main)", i);
    struct heap_arena *r = heap_arenas_add(out, (int64_t)i, name);
    if (!r)
        return -1;
    r->free = glibc_arena_free_bytes(a);
    r->in_use = a->system_current > r->free ? a->system_current - r->free : 0;
    if (m && m->measured) {
        r->resident = m->resident;
        r->measured = true;
        if (i)
            heap_arena_extra(r, "heaps", m->heaps);
        /* in-use bytes never touched are not resident: a lower bound */
        heap_arena_extra(r, "free_resident_at_least",
                         r->resident > r->in_use ? r->resident - r->in_use : 0);
    }
    heap_arena_extra(r, "system", a->system_current);
    return 0;
}

/* The sums when every arena was measured, else what was not, said once. */
static void measured_sums(struct heap_arenas *out, const struct glibc_heaps_result *r,
                          const struct glibc_malloc_info *mi)
{
    size_t missing = 0, narenas = mi->narenas;
    for (size_t i = 0; i < narenas; i++) {
        missing += !r->arena[i].measured;
        out->resident += r->arena[i].resident;
        uint64_t free = glibc_arena_free_bytes(&mi->arenas[i]);
        out->in_use += mi->arenas[i].system_current > free ? mi->arenas[i].system_current - free
                                                           : 0;
    }
    out->measured = !missing && narenas && !r->unmatched;
    if (!missing || out->note[0])
        return;
    snprintf(out->note, sizeof out->note, "%zu of %zu arenas' resident bytes not measured: "
             "no mapping was found holding exactly their system bytes (the main arena "
             "without [heap] uses mmapped memory; a glibc with heaps not 64 MiB-aligned, "
             "such as hugetlb heaps, is not matched)", missing, narenas);
}

static int extra_rows(struct heap_arenas *out, const struct glibc_malloc_info *mi,
                      const struct glibc_heaps_result *r)
{
    struct heap_arena *row;
    if (mi->mmap_count) {
        if (!(row = heap_arenas_add(out, -1, "mmapped chunks")))
            return -1;
        row->in_use = mi->mmap_bytes;
        heap_arena_extra(row, "chunks", mi->mmap_count);
    }
    if (r->unmatched) {
        if (!(row = heap_arenas_add(out, -1, "heaps of no arena listed")))
            return -1;
        row->resident = r->unmatched_rss;
        row->measured = true;
        heap_arena_extra(row, "arenas", r->unmatched);
    }
    return 0;
}

int heap_arenas_glibc(struct session *s, struct heap_arenas *out,
                      const struct allocator_stats *st, const char *smaps, size_t smaps_len)
{
    memset(out, 0, sizeof *out);
    if (!st->have_glibc) {
        snprintf(out->note, sizeof out->note, "glibc gave no per-arena figures");
        return 0;
    }
    const struct glibc_malloc_info *mi = &st->glibc;
    struct glibc_heaps_result r;
    if (measure(s, mi, smaps, smaps_len, &r, out))
        return -1;
    out->arenas = (unsigned)mi->narenas;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < mi->narenas; i++)
        rc = arena_row(out, i, &mi->arenas[i], r.arena ? &r.arena[i] : NULL);
    if (rc == 0)
        rc = extra_rows(out, mi, &r);
    out->heap_starts = r.starts;     /* kept: the categories' hint */
    out->nheap_starts = r.nstarts;
    r.starts = NULL;
    if (r.arena)
        measured_sums(out, &r, mi);
    glibc_heaps_result_free(&r);
    heap_arenas_sort(out);
    return rc;
}
