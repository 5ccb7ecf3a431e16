/* many_arenas.c - 48 threads (or argv[1]), each allocating a spread of
 * size classes and then sleeping: with MALLOC_CONF=narenas:48 every thread
 * has an arena of its own, so that jemalloc's statistics are long to print
 * (a capture that lasts long enough to kill memprof inside it), and a
 * reader that caps what it reads per arena has more than its cap.
 *
 *   many_arenas [THREADS [MIB]]
 *
 * With MIB, each thread instead allocates MIB MiB in blocks of 4000 bytes
 * (below every allocator's mmap threshold: all in its arena), each
 * written, and keeps them: each arena then holds MIB MiB in use and
 * resident (t_memory_arenas; targets.mk also builds it with glibc malloc
 * alone, as glibc_arenas). */
#include <pthread.h>
#include <stdatomic.h>

#include "target_common.h"

#define NTHREADS 48
#define MAX_THREADS 256

#define BLOCK 4000

static atomic_int allocated;   /* workers done allocating */
static long mib;               /* per thread, or 0: the spread */

static void spread(void)
{
    for (size_t size = 8; size <= (1 << 20); size += size / 4 + 8) {
        void *volatile p = malloc(size);
        (void)p;
    }
}

static void fill(void)
{
    for (long left = mib << 20; left > 0; left -= BLOCK) {
        void *volatile p = malloc(BLOCK);
        if (p)
            memset(p, 1, BLOCK);
    }
}

static void *worker(void *arg)
{
    (void)arg;
    if (mib)
        fill();
    else
        spread();
    atomic_fetch_add(&allocated, 1);
    for (;;)
        pause();
    return NULL;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : NTHREADS;
    mib = argc > 2 ? atol(argv[2]) : 0;
    if (n < 1 || n > MAX_THREADS || mib < 0 || mib > 1024)
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
