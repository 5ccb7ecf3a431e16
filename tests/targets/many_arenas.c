/* many_arenas.c - 48 threads (or argv[1]), each allocating a spread of
 * size classes and then sleeping: with MALLOC_CONF=narenas:48 every thread
 * has an arena of its own, so that jemalloc's statistics are long to print
 * (a capture that lasts long enough to kill memprof inside it), and a
 * reader that caps what it reads per arena has more than its cap. */
#include <pthread.h>
#include <stdatomic.h>

#include "target_common.h"

#define NTHREADS 48
#define MAX_THREADS 256

static atomic_int allocated;   /* workers done allocating */

static void *worker(void *arg)
{
    (void)arg;
    for (size_t size = 8; size <= (1 << 20); size += size / 4 + 8) {
        void *volatile p = malloc(size);
        (void)p;
    }
    atomic_fetch_add(&allocated, 1);
    for (;;)
        pause();
    return NULL;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : NTHREADS;
    if (n < 1 || n > MAX_THREADS)
        return 2;
    pthread_t t;
    for (int i = 0; i < n; i++)
        pthread_create(&t, NULL, worker, NULL);
    /* ready once every worker has allocated (not after a second, a guess
     * at how long 48 threads take on a loaded machine) */
    while (atomic_load(&allocated) < n)
        usleep(1000);
    announce_ready();
    for (;;)
        pause();
}
