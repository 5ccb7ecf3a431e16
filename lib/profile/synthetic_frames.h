/* synthetic_frames.h - owns the frames a profile may hold that are no code
 * address: markers memprof writes into a stack to say what kind of sample
 * it is.  Today one: the outermost frame of every sample of memory mapped
 * by mmap, mremap, sbrk or brk (memprof's heap sampler, docs/sampler.md
 * "Mappings"), so that top, flame, diff and pprof keep mappings apart from the heap
 * (one root above every mapping stack) while the mapping's own function
 * stays its innermost frame.
 *
 * The address is in the top page of the 64-bit address space, the
 * kernel's half on x86-64 and arm64: never a user-space return address.
 * The analysis looks a return address up at address - 1, so both match.
 * jeprof, which does not know it, shows it as a bare address. */
#ifndef MEMPROF_SYNTHETIC_FRAMES_H
#define MEMPROF_SYNTHETIC_FRAMES_H

#include <stdbool.h>
#include <stdint.h>

#define PROFILE_FRAME_MAPPING       UINT64_C(0xfffffffffffff100)
#define PROFILE_FRAME_MAPPING_NAME  "[mapped: mmap/mremap/brk]"

static inline bool profile_frame_is_mapping(uint64_t addr)
{
    return addr == PROFILE_FRAME_MAPPING || addr == PROFILE_FRAME_MAPPING - 1;
}

#endif
