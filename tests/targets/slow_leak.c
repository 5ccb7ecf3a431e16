/* slow_leak.c - a slow leak hidden in heavy churn, for `trend`: one
 * thread's leak_slowly keeps 2 KiB every 125 ms (16 KiB/s, never
 * freed), while churn_pool and churn_large allocate and free some 100 MiB
 * a second with random lifetimes, their in-use bytes swinging between
 * about 1 and 6 MiB as each one's fill level jumps at random.  Prints "ready"
 * once the threads run; runs until killed.  Run with prof:true and a low
 * lg_prof_sample (12: 4 KiB) so that the leak's blocks are sampled: at
 * 2 KiB a block, some 6 of the 16 blocks kept in 2 s are sampled, so a
 * series of dumps 2 s apart rises at every step (with 512-byte blocks, 2 a
 * step, one run in a few hundred had enough flat steps to read as less
 * than 90% monotonic). */
#include <stdint.h>

#include "target_common.h"

/* The leaked blocks, chained through their first bytes: no other
 * allocation grows with them. */
static void *volatile leaked;

#define LEAK_BLOCK 2048

__attribute__((noinline)) static void leak_slowly(void)
{
    void **block = malloc(LEAK_BLOCK);
    if (!block)
        return;
    memset(block, 0x5a, LEAK_BLOCK);
    *block = leaked;
    leaked = block;
}

static void *leaker(void *arg)
{
    (void)arg;
    for (;;) {
        leak_slowly();
        usleep(125000);
    }
    return NULL;
}

/* A pool of slots kept at a fill level that jumps at random every 0.6 s
 * (by the clock, not a count of rounds, so that the churn swings as often
 * on a slow or loaded machine): many small blocks replaced all the time. */
#define POOL_SLOTS 1024

__attribute__((noinline)) static void churn_pool(void **slot, size_t target, unsigned *seed)
{
    for (int i = 0; i < 32; i++) {
        size_t k = (size_t)rand_r(seed) % POOL_SLOTS;
        free(slot[k]);
        slot[k] = NULL;
        if (k < target) {
            size_t size = 64 + (size_t)rand_r(seed) % 8192;
            slot[k] = malloc(size);
            if (slot[k])
                memset(slot[k], 1, size);
        }
    }
}

static void *pool_churner(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    void **slot = calloc(POOL_SLOTS, sizeof *slot);
    size_t target = POOL_SLOTS / 2;
    double next_level = 0;
    while (slot) {
        if (mono_seconds() >= next_level) { /* a new level: 20% to 100% of the slots */
            target = POOL_SLOTS / 5 + (size_t)rand_r(&seed) % (POOL_SLOTS * 4 / 5);
            next_level = mono_seconds() + 0.6;
        }
        churn_pool(slot, target, &seed);
        usleep(2000);
    }
    return NULL;
}

/* Large blocks (64 KiB to 256 KiB) with lifetimes of a few to a few
 * hundred milliseconds. */
#define LARGE_SLOTS 24

__attribute__((noinline)) static void churn_large(void **slot, unsigned *seed)
{
    size_t k = (size_t)rand_r(seed) % LARGE_SLOTS;
    free(slot[k]);
    slot[k] = NULL;
    if (rand_r(seed) % 3) {
        size_t size = 65536 + (size_t)rand_r(seed) % 196608;
        slot[k] = malloc(size);
        if (slot[k])
            memset(slot[k], 2, size);
    }
}

static void *large_churner(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    void **slot = calloc(LARGE_SLOTS, sizeof *slot);
    while (slot) {
        for (int i = 0; i < 2; i++)
            churn_large(slot, &seed);
        usleep(5000);
    }
    return NULL;
}

int main(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, leaker, NULL) ||
        pthread_create(&t, NULL, pool_churner, (void *)(uintptr_t)7) ||
        pthread_create(&t, NULL, large_churner, (void *)(uintptr_t)11))
        return 1;
    announce_ready();
    for (;;)
        pause();
}
