/* signal_rounds.h - the main loop of the targets whose work is done in
 * rounds on request (glibc_live, glibc_mappings): "pid N" and "ready",
 * then one round per SIGUSR1 and a release of what it kept per SIGUSR2,
 * each taken by sigwait in the main thread (no handler: the work runs
 * where a test expects its stacks, under main). */
#ifndef MEMPROF_TARGET_SIGNAL_ROUNDS_H
#define MEMPROF_TARGET_SIGNAL_ROUNDS_H

#include <signal.h>
#include <stdio.h>
#include <unistd.h>

/* A macro, not a function: a function, even inlined, would be a frame
 * (DWARF shows inlined calls) between main and the round. */
#define ROUNDS_ON_SIGNALS(round, release) do {                                \
    sigset_t set_;                                                            \
    sigemptyset(&set_);                                                       \
    sigaddset(&set_, SIGUSR1);                                                \
    sigaddset(&set_, SIGUSR2);                                                \
    sigprocmask(SIG_BLOCK, &set_, NULL);                                      \
    setvbuf(stdout, NULL, _IOLBF, 0);                                         \
    printf("pid %d\nready\n", (int)getpid());                                 \
    for (int n_ = 1;;) {                                                      \
        int sig_;                                                             \
        if (sigwait(&set_, &sig_) != 0)                                       \
            continue;                                                         \
        if (sig_ == SIGUSR1)                                                  \
            round(n_++);                                                      \
        else                                                                  \
            release();                                                        \
    }                                                                         \
} while (0)

#endif
