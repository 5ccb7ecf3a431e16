/* known_heap.c - a jemalloc process holding a known 100 MiB in known size
 * classes: 50 blocks of 1 MiB (large), 400 of 64 KiB (large) and 6400 of
 * 4 KiB (a small bin), every page touched.  SIGUSR1 frees them all and
 * prints "freed"; run with dirty_decay_ms:-1,muzzy_decay_ms:-1 the pages
 * stay dirty in jemalloc until someone purges.  Nothing here calls
 * mallctl. */
#include <pthread.h>
#include <signal.h>

#include "target_common.h"

#define N1M 50
#define N64K 400
#define N4K 6400

static void *blocks[N1M + N64K + N4K];

static void *idle(void *arg)
{
    (void)arg;
    for (;;)
        pause();
    return NULL;
}

int main(void)
{
    sigset_t usr1 = usr1_blocked();
    pthread_t t;
    pthread_create(&t, NULL, idle, NULL);
    size_t n = 0;
    for (int i = 0; i < N1M; i++)
        blocks[n++] = malloc(1 << 20);
    for (int i = 0; i < N64K; i++)
        blocks[n++] = malloc(64 << 10);
    for (int i = 0; i < N4K; i++)
        blocks[n++] = malloc(4 << 10);
    for (size_t i = 0; i < n; i++)
        if (blocks[i])
            memset(blocks[i], 1, i < N1M ? 1 << 20 : i < N1M + N64K ? 64 << 10 : 4 << 10);
    announce_ready();
    int sig;
    while (sigwait(&usr1, &sig) != 0)
        ;
    for (size_t i = 0; i < n; i++)
        free(blocks[i]);
    printf("freed\n");
    fflush(stdout);
    for (;;)
        pause();
}
