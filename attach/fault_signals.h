/* fault_signals.h - the synchronous signals the kernel forces on a thread
 * whose instruction faults (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP,
 * SIGSYS).  Forced on a thread that blocks it, such a signal has its
 * handler reset to SIG_DFL for the whole process: why a call keeps them
 * deliverable (remote_call.c) and why a thread that blocks one is
 * borrowed last (threads.c). */
#ifndef MEMPROF_FAULT_SIGNALS_H
#define MEMPROF_FAULT_SIGNALS_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

static inline bool fault_signal(int sig)
{
    return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE ||
           sig == SIGTRAP || sig == SIGSYS;
}

/* Their bits in a kernel signal mask (bit sig-1). */
static inline uint64_t fault_signals_mask(void)
{
    uint64_t mask = 0;
    for (int sig = 1; sig <= 64; sig++)
        if (fault_signal(sig))
            mask |= (uint64_t)1 << (sig - 1);
    return mask;
}

#endif
