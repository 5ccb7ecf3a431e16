/* unsafe_ctor.c - a shared library whose constructor blocks: while the
 * program's dlopen() runs it, the dynamic loader's lock is held and the
 * thread's stack is full of ld.so frames.  It calls back into the program
 * (unsafe_frames_block, exported with -rdynamic). */
#include "../unsafe_frames.h"

__attribute__((constructor)) static void block_in_constructor(void)
{
    unsafe_frames_block();
}
