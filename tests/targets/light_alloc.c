/* light_alloc.c - a process that allocates very little: one 16-byte block
 * every 100 ms, at most 8 of them live.  At jemalloc's default rate (one
 * sample per 512 KiB allocated) a dump taken seconds after 'prof on' holds
 * no sample, as on a lightly loaded server. */
#include <pthread.h>

#include "target_common.h"

static void *trickle(void *arg)
{
    (void)arg;
    char *ring[8] = {0};
    for (unsigned i = 0;; i++) {
        free(ring[i % 8]);
        ring[i % 8] = malloc(16);
        if (ring[i % 8])
            memset(ring[i % 8], 1, 16);
        usleep(100000);
    }
    return NULL;
}

int main(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, trickle, NULL))
        return 1;
    announce_ready();
    pthread_join(t, NULL);
    return 0;
}
