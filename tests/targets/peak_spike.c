/* peak_spike.c - a jemalloc process whose memory spikes when asked: each
 * SIGUSR1 makes the main thread allocate 96 MiB more than it ever held
 * before, in 1 MiB blocks from spike_alloc, touch them and free them all
 * at once, then print "spiked N" (N spikes so far).  Between spikes it
 * holds little, so a dump taken before or after a spike never shows it;
 * only a dump at the high-water mark (prof.gdump) does.  A worker churns
 * a little. */
#include <pthread.h>
#include <signal.h>

#include "target_common.h"

#define BLOCKS 96

/* noinline: the function a peak dump must name */
__attribute__((noinline)) static void spike_alloc(char **blocks, int n)
{
    for (int i = 0; i < n; i++) {
        blocks[i] = malloc(1 << 20);
        if (blocks[i])
            memset(blocks[i], 1, 1 << 20);
    }
}

int main(void)
{
    sigset_t usr1 = usr1_blocked();
    pthread_t t;
    pthread_create(&t, NULL, churn_forever, NULL);
    announce_ready();
    int spikes = 0, sig;
    for (;;) {
        if (sigwait(&usr1, &sig) != 0)
            continue;
        /* each spike higher than the last: a new high-water mark every time */
        int n = BLOCKS * (spikes + 1);
        char **blocks = calloc((size_t)n, sizeof *blocks);
        if (!blocks)
            continue;
        spike_alloc(blocks, n);
        for (int i = 0; i < n; i++)
            free(blocks[i]);
        free(blocks);
        printf("spiked %d\n", ++spikes);
        fflush(stdout);
    }
}
