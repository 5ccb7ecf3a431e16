/* light_alloc.c - a process that allocates very little: one 8-byte block
 * every 100 ms, only the latest of them live.  At jemalloc's default rate
 * (one sample per 512 KiB allocated) a dump taken seconds after 'prof on'
 * holds no sample, as on a lightly loaded server.  A dump holds a sample
 * only if the live block was the one sampled: 8 bytes in 2^19, one dump in
 * 65,000 (with 8 live 16-byte blocks it was 128 bytes in 2^19, one dump in
 * 4,000, which t_session_empty_dump's "dump is empty" could not afford). */
#include <pthread.h>

#include "target_common.h"

/* Seen from outside: the compiler may not drop the malloc/free pair. */
static char *volatile block;

static void *trickle(void *arg)
{
    (void)arg;
    for (;;) {
        free(block);
        block = malloc(8);
        if (block)
            memset(block, 1, 8);
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
