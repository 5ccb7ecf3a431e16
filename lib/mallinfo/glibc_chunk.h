/* glibc_chunk.h - the header glibc's malloc writes at the start of a chunk
 * it mmapped on its own (an allocation above the mmap threshold:
 * sysmalloc_mmap in malloc/malloc.c): prev_size 0, then the size, which
 * is the whole mapping's length (whole pages) with IS_MMAPPED set and
 * NON_MAIN_ARENA clear.  Such a mapping holds the allocator's heap, not
 * "other mmaps".  Pure: the bytes are read from a process memprof does
 * not trust, and nothing here follows them. */
#ifndef MEMPROF_GLIBC_CHUNK_H
#define MEMPROF_GLIBC_CHUNK_H

#include <stdbool.h>
#include <stdint.h>

/* The kernel merges adjacent anonymous mappings of the same protection
 * into one: a mapping may hold several chunks back to back, each starting
 * with its header.  The length of the chunk whose header is hdr (16 bytes
 * read at a page boundary), when hdr is an mmapped chunk's header and the
 * chunk fits in the room bytes left in its mapping; 0 otherwise.  (A
 * chunk of memalign's placed past its mapping's start is not recognised:
 * it is rare, and left to "other mmaps".) */
uint64_t glibc_mmapped_chunk_len(const uint64_t hdr[2], uint64_t room);

/* M_TRIM_THRESHOLD's default (DEFAULT_TRIM_THRESHOLD): a top that free()
 * trims is cut down to about this, never below. */
#define GLIBC_TRIM_THRESHOLD_DEFAULT (128u * 1024)

/* A thread arena's top chunk (the free space at the end of its newest
 * heap, in no bin): malloc_state's top pointer lies at this offset from
 * the arena (heap_info's ar_ptr) on 64-bit glibc 2.27 and later (mutex,
 * flags, have_fastchunks, then 10 fastbins). */
#define GLIBC_ARENA_TOP_OFFSET 96u
/* The top chunk's length, when the chunk at top whose size field is
 * size_field ends exactly where the heap it lies in ends (heap_start +
 * heap_size, heap_info's size: glibc keeps the top there), else 0. */
uint64_t glibc_top_chunk_len(uint64_t top, uint64_t size_field, uint64_t heap_start,
                             uint64_t heap_size);

#endif
