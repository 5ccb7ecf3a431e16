/* late_park.c - a library unsafe_frames maps only after memprof's first
 * stop ("late" mode), with a frame of its own on the stack while the
 * thread blocks: built without frame pointers, so a walk that did not read
 * this library's unwind tables could not step past it. */
#include <string.h>

#include "../unsafe_frames.h"

/* A frame that is not the caller's: a local array the compiler cannot
 * drop, and work after the call so that it is not a tail call. */
__attribute__((noinline)) void late_park(void)
{
    volatile char scratch[96];
    memset((char *)scratch, 1, sizeof scratch);
    unsafe_frames_block();
    scratch[0] = 2;
}
