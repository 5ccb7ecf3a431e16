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
#include "lib/proc/maps.h"

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

/* The map read at creation or by the last recheck. */
const struct map_list *unwind_memory_maps(const struct unwind_memory *m);

/* Forget the pages that may change (stacks): call when a new stop begins. */
void unwind_memory_new_stop(struct unwind_memory *m);

/* Serve [start, end) of the process from memprof's own mapping of fd at
 * file_offset, without reading the process: for a range the loader never
 * writes (a read-only segment outside RELRO, no text relocations), whose
 * bytes are the file's.  Only when the current map has one private,
 * read-only mapping holding the whole range, of fd's very file (device and
 * inode) at that offset; the window is dropped with the kept pages when a
 * recheck finds the read-only file mappings changed.  0, or -1 (not
 * added: the range is read from the process as before). */
int unwind_memory_add_file(struct unwind_memory *m, uint64_t start, uint64_t end, int fd,
                           uint64_t file_offset);

/* The 8 bytes at addr.  0, or -1 when the memory cannot be read. */
int unwind_memory_word(struct unwind_memory *m, uint64_t addr, uint64_t *val);


#endif
