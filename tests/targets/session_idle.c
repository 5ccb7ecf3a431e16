/* session_idle.c - a quiet jemalloc process for session tests: two threads
 * that keep a ring of 64 live 4 KiB blocks from keep_block() (so a dump
 * taken after 'prof on' has stacks) and sleep; the main thread in pause(). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static __attribute__((noinline)) void keep_block(char **ring, unsigned slot)
{
    free(ring[slot]);
    ring[slot] = malloc(4096);
    memset(ring[slot], 1, 4096);
}

static void *worker(void *arg)
{
    (void)arg;
    char *ring[64] = {0};
    for (unsigned i = 0;; i++) {
        keep_block(ring, i % 64);
        usleep(2000);
    }
    return NULL;
}

int main(void)
{
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    printf("ready\n");
    fflush(stdout);
    for (;;)
        pause();
}
