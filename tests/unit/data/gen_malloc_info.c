/* Makes tests/unit/data/glibc_malloc_info.xml: glibc's malloc_info(0, stdout)
 * while 4 threads hold their own arenas, with free chunks in fast bins, in
 * sorted bins and unsorted, and a few mmapped blocks (test_glibc_info.c).
 * Captured on Debian 12 (glibc 2.36):
 *   gcc -O1 -pthread gen_malloc_info.c && ./a.out > glibc_malloc_info.xml */
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_barrier_t bar;

/* Frees every other block, so the freed ones cannot merge. */
static void scatter(void *volatile *keep, int n, size_t base, size_t step)
{
    for (int i = 0; i < n; i++)
        keep[i] = malloc(base + (size_t)(i * step) % 2000);
    for (int i = 0; i < n; i += 2)
        free(keep[i]);
}

static void *worker(void *arg)
{
    long id = (long)arg;
    void *volatile keep[2000], *volatile small[200];
    scatter(keep, 2000, 16 + id * 11, 37);
    /* Before the small frees: a large request empties the fast bins. */
    void *volatile big = malloc(300000);
    /* More than tcache's 7 per size: the rest go to fast bins. */
    for (int i = 0; i < 200; i++)
        small[i] = malloc(24 + (i % 4) * 16);
    for (int i = 0; i < 200; i += 2)
        free(small[i]);
    pthread_barrier_wait(&bar);
    pthread_barrier_wait(&bar);
    free(big);
    return NULL;
}

int main(void)
{
    enum { N = 4 };
    pthread_t t[N];
    void *volatile keep[500], *volatile small[100];
    static char outbuf[1 << 16];
    /* stdout's own buffer would be a large request, emptying fast bins. */
    setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
    pthread_barrier_init(&bar, NULL, N + 1);
    void *volatile big = malloc(1 << 20);
    scatter(keep, 500, 24, 13);
    for (int i = 0; i < 100; i++)
        small[i] = malloc(40);
    for (int i = 0; i < 100; i += 2)
        free(small[i]);
    for (long i = 0; i < N; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    pthread_barrier_wait(&bar);
    malloc_info(0, stdout);
    pthread_barrier_wait(&bar);
    for (int i = 0; i < N; i++)
        pthread_join(t[i], NULL);
    free(big);
    return 0;
}
