/* mono_clock.h - seconds on the monotonic clock, for deadlines and the
 * time a thing took (never the wall clock, which can jump). */
#ifndef MEMPROF_MONO_CLOCK_H
#define MEMPROF_MONO_CLOCK_H

#include <time.h>

static inline double mono_clock_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#endif
