/* unsafe_frames.h - what unsafe_frames.c and its constructor library
 * (unsafe_ctor.so) share. */
#ifndef MEMPROF_UNSAFE_FRAMES_H
#define MEMPROF_UNSAFE_FRAMES_H

#define UNSAFE_MESSAGE "memprof-unsafe-frame-message\n"

/* Open $FIFO, print "ready", block in read() on it, check the message. */
void unsafe_frames_block(void);

#endif
