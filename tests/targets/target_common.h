/* target_common.h - what every test target shares: saying "ready" once it
 * can be attached to, and a little allocation churn so that jemalloc has
 * something to profile. */
#ifndef MEMPROF_TARGET_COMMON_H
#define MEMPROF_TARGET_COMMON_H

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static inline void announce_ready(void)
{
    printf("ready\n");
    fflush(stdout);
}

static inline double mono_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Allocate and free a few blocks of varied sizes; keep some live. */
static inline void churn(void **keep, size_t nkeep, unsigned *seed)
{
    for (int i = 0; i < 64; i++) {
        size_t slot = rand_r(seed) % nkeep;
        free(keep[slot]);
        size_t size = 16 + rand_r(seed) % 8192;
        keep[slot] = malloc(size);
        if (keep[slot])
            memset(keep[slot], (int)slot, size);
    }
}

/* A thread body that churns forever, pausing 1 ms between rounds. */
static inline void *churn_forever(void *arg)
{
    (void)arg;
    void *keep[256] = { 0 };
    unsigned seed = 1;
    for (;;) {
        churn(keep, 256, &seed);
        usleep(1000);
    }
    return NULL;
}

/* SIGUSR1 blocked in this thread and those it creates afterwards, to be
 * taken with sigwait: no request is lost between two waits. */
static inline sigset_t usr1_blocked(void)
{
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &usr1, NULL);
    return usr1;
}

#endif
