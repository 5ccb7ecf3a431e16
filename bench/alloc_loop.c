/* alloc_loop.c - what an allocation costs, measured inside the process:
 * on each SIGUSR1, ROUNDS x 1,000,000 malloc/free pairs of sizes 16..4096
 * (a fixed pseudo-random sequence, with 64 blocks kept live in a ring, as a
 * server's request buffers), then "ns_per_pair X" for the best round.
 * glibc malloc only; built -O2 without frame pointers like Debian's
 * servers. */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define PAIRS 1000000
#define ROUNDS 5
#define RING 64

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

__attribute__((noinline)) static double one_round(void)
{
    static void *ring[RING];
    uint64_t x = 88172645463325252ull;
    double t0 = now();
    for (int i = 0; i < PAIRS; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        size_t size = 16 + (x % 4081);
        free(ring[i % RING]);
        char *p = malloc(size);
        if (!p)
            abort();
        p[0] = 1;
        ring[i % RING] = p;
    }
    return (now() - t0) * 1e9 / PAIRS;
}

int main(void)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    sigprocmask(SIG_BLOCK, &set, NULL);
    setvbuf(stdout, NULL, _IOLBF, 0);
    printf("ready\n");
    for (;;) {
        int sig;
        if (sigwait(&set, &sig) != 0)
            continue;
        double best = 1e18;
        for (int r = 0; r < ROUNDS; r++) {
            double ns = one_round();
            best = ns < best ? ns : best;
        }
        printf("ns_per_pair %.2f\n", best);
    }
}
