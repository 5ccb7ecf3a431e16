/* stress8.c - eight threads allocating and freeing hard, each block filled
 * with a pattern derived from its address and checked before it is freed;
 * any mismatch prints CORRUPT and exits 1.  Run with argument 'report' it
 * prints "checked N" every second so tests see it is still working. */
#include <pthread.h>
#include <stdint.h>

#include "target_common.h"

#define THREADS 8
#define SLOTS 512

static volatile unsigned long checked[THREADS];

static uint8_t pattern(const void *p, size_t i, size_t size)
{
    return (uint8_t)(((uintptr_t)p >> 4) ^ i ^ size);
}

static void fill(uint8_t *p, size_t size)
{
    for (size_t i = 0; i < size; i++)
        p[i] = pattern(p, i, size);
}

static void verify(const uint8_t *p, size_t size)
{
    for (size_t i = 0; i < size; i++)
        if (p[i] != pattern(p, i, size)) {
            printf("CORRUPT block %p byte %zu of %zu\n", (const void *)p, i, size);
            fflush(stdout);
            _exit(1);
        }
}

static void *worker(void *arg)
{
    long id = (long)arg;
    uint8_t *blocks[SLOTS] = { 0 };
    size_t sizes[SLOTS] = { 0 };
    unsigned seed = (unsigned)id + 1;
    for (;;) {
        size_t s = rand_r(&seed) % SLOTS;
        if (blocks[s]) {
            verify(blocks[s], sizes[s]);
            free(blocks[s]);
        }
        sizes[s] = 1 + rand_r(&seed) % (rand_r(&seed) % 8 ? 512 : 65536);
        blocks[s] = malloc(sizes[s]);
        if (!blocks[s]) {
            printf("CORRUPT malloc failed\n");
            _exit(1);
        }
        fill(blocks[s], sizes[s]);
        checked[id]++;
    }
    return NULL;
}

int main(void)
{
    pthread_t t[THREADS];
    for (long i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    announce_ready();
    for (;;) {
        sleep(1);
        unsigned long sum = 0;
        for (int i = 0; i < THREADS; i++)
            sum += checked[i];
        printf("checked %lu\n", sum);
        fflush(stdout);
    }
}
