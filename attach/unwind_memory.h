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

#include "lib/base/error.h"

struct unwind_memory;

/* Reads /proc/PID/maps: what is read-only now is taken to stay so until
 * unwind_memory_recheck says otherwise. */
struct unwind_memory *unwind_memory_new(pid_t pid, struct mp_error *err);
void unwind_memory_free(struct unwind_memory *m);

/* Read /proc/PID/maps again.  When the read-only file mappings changed (an
 * object unloaded, another mapped in its place), forget every kept page
 * and return 1; 0 when they are the same; -1, forgetting them too, when
 * maps cannot be read (the process is gone). */
int unwind_memory_recheck(struct unwind_memory *m);

/* Forget the pages that may change (stacks): call when a new stop begins. */
void unwind_memory_new_stop(struct unwind_memory *m);

/* The 8 bytes at addr.  0, or -1 when the memory cannot be read. */
int unwind_memory_word(struct unwind_memory *m, uint64_t addr, uint64_t *val);


#endif
