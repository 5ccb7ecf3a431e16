/* smaps_aligned.h - the private anonymous mappings of an smaps text that
 * begin on a given power-of-two boundary, with their resident bytes, and
 * the resident bytes of [heap]: where glibc's arenas live (each thread
 * arena's heaps are HEAP_MAX_SIZE-aligned anonymous mappings, the main
 * arena is the brk heap).  Pure: the text is the kernel's, cut or hostile
 * in shape; nothing here opens a file or reads the process. */
#ifndef MEMPROF_SMAPS_ALIGNED_H
#define MEMPROF_SMAPS_ALIGNED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bounded: a process with more such mappings has the rest left out
 * (smaps_aligned.cut says so). */
#define SMAPS_ALIGNED_MAX 65536

struct smaps_aligned_map {
    uint64_t start, end;     /* [start, end), readable and writable */
    uint64_t rss;            /* bytes */
};

struct smaps_aligned {
    struct smaps_aligned_map *v;
    size_t n, cap;
    bool cut;                /* more than SMAPS_ALIGNED_MAX */
    bool have_brk;           /* a [heap] mapping was seen */
    uint64_t brk_rss;        /* its resident bytes (all [heap] mappings) */
};

/* align: a power of two.  0, or -1 out of memory (out then empty). */
int smaps_aligned_read(const char *text, size_t len, uint64_t align, struct smaps_aligned *out);
void smaps_aligned_free(struct smaps_aligned *a);

#endif
