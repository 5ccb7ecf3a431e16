/* cfi_walk.h - a call stack walked offline with unwind rows (cfi_rows.h)
 * over a copy of a thread's stack: the page-fault sampler's stacks
 * (session/faults.c), copied by the kernel into a perf ring buffer.
 *
 * The same rules as the in-process sampler's walk (allocator/sampler/
 * inproc/sampler.c), with one difference: the first pc is where the thread
 * was (a faulting instruction, possibly a function's first byte), not a
 * return address, so its row is looked up at pc itself; the callers' at
 * return address - 1.
 *
 * The copy holds whatever the process had on its stack: every read is
 * bounded by it (a word outside the copy ends the walk), the CFA must
 * rise at every step (no loop), and the frames are bounded by max. */
#ifndef MEMPROF_CFI_WALK_H
#define MEMPROF_CFI_WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/elf/cfi_rows.h"

/* A copy of stack memory: len bytes that were at address base. */
struct cfi_stack {
    uint64_t base;
    const uint8_t *bytes;
    size_t len;
};

/* Walk from (pc, sp, fp).  frames[0] = pc, then each caller's return
 * address, at most max.  Returns the count; *truncated says the walk
 * stopped early (no row, a read outside the copy, the limit) rather than
 * at the outermost frame. */
size_t cfi_walk(const struct cfi_rows *rows, uint64_t pc, uint64_t sp, uint64_t fp,
                const struct cfi_stack *stack, uint64_t *frames, size_t max,
                bool *truncated);

#endif
