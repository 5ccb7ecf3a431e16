/* small_leak.c - a process that makes small allocations from its start
 * (jemalloc's malloc fast path, in every thread, while profiling is still
 * off) and, at each SIGUSR1, leaks 32 MiB in 1 KiB blocks from a known
 * function (leak_small_blocks, in its main thread) and prints "leaked N"
 * with the bytes leaked so far.  A second thread churns small blocks all
 * the time.  For jemalloc 5.2, where a thread whose fast path ran while
 * prof.active was false never samples again (t_jemalloc52). */
#include <pthread.h>
#include <signal.h>

#include "target_common.h"

#define BLOCK 1024
#define PER_SIGNAL (32u << 20)

static void *volatile leaked;

__attribute__((noinline)) static void leak_small_blocks(void)
{
    for (unsigned i = 0; i < PER_SIGNAL / BLOCK; i++) {
        void **b = malloc(BLOCK);
        if (!b)
            exit(1);
        memset(b, 3, BLOCK);
        *b = leaked;            /* a list: nothing is lost to leak checks */
        leaked = b;
    }
}

/* Small blocks allocated and freed, as any program does at its start. */
static void warm_up(void)
{
    for (int i = 0; i < 1000; i++) {
        void *volatile p = malloc(64 + (size_t)i % 512);
        free(p);
    }
}

static void *churner(void *arg)
{
    warm_up();
    return churn_forever(arg);
}

int main(void)
{
    sigset_t usr1 = usr1_blocked();
    warm_up();
    pthread_t t;
    pthread_create(&t, NULL, churner, NULL);
    announce_ready();
    unsigned long total = 0;
    for (;;) {
        int sig;
        sigwait(&usr1, &sig);
        leak_small_blocks();
        total += PER_SIGNAL;
        printf("leaked %lu\n", total);
        fflush(stdout);
    }
}
