/* session_idle.c - a quiet jemalloc process for session tests: two threads
 * that allocate a little and sleep, and a main thread in pause(). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *worker(void *arg)
{
    (void)arg;
    for (;;) {
        char *p = malloc(4096);
        memset(p, 1, 4096);
        free(p);
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
