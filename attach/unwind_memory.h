/* unwind_memory.h - the target memory the stack unwinder reads, without a
 * ptrace call per word: pages of read-only file mappings (code, eh_frame,
 * eh_frame_hdr) are read once with process_vm_readv and kept for the whole
 * session; every other page (stacks) is read once per stop and forgotten
 * when the next stop begins. */
#ifndef MEMPROF_UNWIND_MEMORY_H
#define MEMPROF_UNWIND_MEMORY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/error.h"

struct unwind_memory;

/* Reads /proc/PID/maps once: what is read-only now is taken to stay so
 * (code that is unmapped and replaced mid-session is not followed). */
struct unwind_memory *unwind_memory_new(pid_t pid, struct mp_error *err);
void unwind_memory_free(struct unwind_memory *m);

/* Forget the pages that may change (stacks): call when a new stop begins. */
void unwind_memory_new_stop(struct unwind_memory *m);

/* The 8 bytes at addr.  0, or -1 when the memory cannot be read. */
int unwind_memory_word(struct unwind_memory *m, uint64_t addr, uint64_t *val);

/* Would the page holding addr be kept across stops? */
bool unwind_memory_persistent(const struct unwind_memory *m, uint64_t addr);

/* Counters for tests and benchmarks: pages read from the target so far. */
unsigned long unwind_memory_reads(const struct unwind_memory *m);

#endif
