/* many_arenas.c - 48 threads, each allocating a spread of size classes
 * and then sleeping: with MALLOC_CONF=narenas:48 every thread has an arena
 * of its own, so that jemalloc's statistics are long to print (a capture
 * that lasts long enough to kill memprof inside it). */
#include <pthread.h>

#include "target_common.h"

#define NTHREADS 48

static void *worker(void *arg)
{
    (void)arg;
    for (size_t size = 8; size <= (1 << 20); size += size / 4 + 8) {
        void *volatile p = malloc(size);
        (void)p;
    }
    for (;;)
        pause();
    return NULL;
}

int main(void)
{
    pthread_t t;
    for (int i = 0; i < NTHREADS; i++)
        pthread_create(&t, NULL, worker, NULL);
    sleep(1);
    announce_ready();
    for (;;)
        pause();
}
