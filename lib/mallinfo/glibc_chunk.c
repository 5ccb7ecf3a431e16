/* glibc_chunk.c - see lib/mallinfo/glibc_chunk.h. */
#include "lib/mallinfo/glibc_chunk.h"

#include <stdbool.h>

#define GLIBC_PREV_INUSE      1u
#define GLIBC_IS_MMAPPED      2u
#define GLIBC_NON_MAIN_ARENA  4u
#define GLIBC_SIZE_BITS       7u

/* mmap's length is whole pages, of 4 KiB at least */
#define GLIBC_PAGE_MIN 4096u

uint64_t glibc_top_chunk_len(uint64_t top, uint64_t size_field, uint64_t heap_start,
                             uint64_t heap_size)
{
    uint64_t len = size_field & ~(uint64_t)GLIBC_SIZE_BITS;
    if (size_field & GLIBC_IS_MMAPPED || heap_size > UINT64_MAX - heap_start ||
        top < heap_start || top >= heap_start + heap_size)
        return 0;
    return len && len == heap_start + heap_size - top ? len : 0;
}

uint64_t glibc_mmapped_chunk_len(const uint64_t hdr[2], uint64_t room)
{
    uint64_t size = hdr[1], len = size & ~(uint64_t)GLIBC_SIZE_BITS;
    bool header = hdr[0] == 0 && (size & GLIBC_IS_MMAPPED) &&
                  !(size & (GLIBC_NON_MAIN_ARENA | GLIBC_PREV_INUSE));
    return header && len && len % GLIBC_PAGE_MIN == 0 && len <= room ? len : 0;
}
