/* glibc_chunks.h - the resident bytes of glibc's mmapped chunks (its
 * large allocations, each a mapping of its own), found among a process's
 * anonymous mappings by the header at each one's start
 * (lib/mallinfo/glibc_chunk.h), so that 'memory' counts them in the heap
 * and not as other mmaps. */
#ifndef MEMPROF_GLIBC_CHUNKS_H
#define MEMPROF_GLIBC_CHUNKS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/proc/rss_account.h"

/* Headers read at most: a process with more anonymous mappings has the
 * rest left to "other mmaps". */
#define GLIBC_CHUNKS_READ_MAX 65536u

/* The Rss of r's anonymous mappings (besides [heap] and the heaps at
 * heap_starts[0..n)) made wholly of mmapped chunks, their headers read
 * from pid's memory without stopping it (a mapping that cannot be read is
 * not counted); *chunks: how many chunks they hold. */
uint64_t glibc_chunks_resident(pid_t pid, const struct rss_account *r,
                               const uint64_t *heap_starts, size_t n, unsigned *chunks);

#endif
