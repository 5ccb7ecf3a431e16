/* glibc_arenas_freed.c - glibc malloc only: 8 threads at once, each in an
 * arena of its own (glibc gives each new thread a new arena, up to 8 per
 * core), allocate 16 MiB in 64 KiB blocks (below the mmap threshold: from
 * their arena's heap), write them, keep one small block above them, free
 * the blocks, and then stay, blocked.  Each arena so holds 16 MiB free
 * below a live block, which glibc keeps resident until malloc_trim(0).
 * Prints "planted BYTES" (8 x 16 MiB) once every thread has freed, then
 * "ready"; the main thread then idles. */
#include <pthread.h>
#include <unistd.h>

#include "idle.h"

#define NTHREADS 8
#define BLOCK ((size_t)64 << 10)
#define BYTES ((size_t)16 << 20)

static pthread_barrier_t started, freed;

static void *worker(void *arg)
{
    (void)arg;
    static __thread char *blocks[BYTES / BLOCK];
    pthread_barrier_wait(&started);    /* all alive: no arena is reused */
    for (size_t i = 0; i < BYTES / BLOCK; i++) {
        blocks[i] = malloc(BLOCK);
        REQUIRE(blocks[i], "out of memory");
        memset(blocks[i], 0x5a, BLOCK);
    }
    char *volatile keep = malloc(64);
    REQUIRE(keep, "out of memory");
    for (size_t i = 0; i < BYTES / BLOCK; i++)
        free(blocks[i]);
    pthread_barrier_wait(&freed);
    for (;;)
        pause();
    return NULL;
}

int main(void)
{
    pthread_t t;
    pthread_barrier_init(&started, NULL, NTHREADS);
    pthread_barrier_init(&freed, NULL, NTHREADS + 1);
    for (int i = 0; i < NTHREADS; i++)
        REQUIRE(pthread_create(&t, NULL, worker, NULL) == 0, "pthread_create failed");
    pthread_barrier_wait(&freed);
    printf("planted %zu\nready\n", (size_t)NTHREADS * BYTES);
    fflush(stdout);
    idle_forever();
}
