/* Makes a small real heap_v2 dump: two threads (one named), a few sizes. */
#include <jemalloc/jemalloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *volatile keep[4096];
static int nkeep;

__attribute__((noinline)) static void alloc_small(int n) { for (int i = 0; i < n; i++) keep[nkeep++] = malloc(1000); }
__attribute__((noinline)) static void alloc_big(int n) { for (int i = 0; i < n; i++) keep[nkeep++] = malloc(100000); }

static void *worker(void *arg)
{
    (void)arg;
    const char *name = "worker two";
    mallctl("thread.prof.name", NULL, NULL, &name, sizeof name);
    alloc_big(3);
    alloc_small(7);
    return NULL;
}

int main(int argc, char **argv)
{
    const char *fname = argc > 1 ? argv[1] : "real.heap";
    alloc_small(100);
    alloc_big(10);
    void *tmp = malloc(5000); free(tmp);
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    pthread_join(t, NULL);
    if (mallctl("prof.dump", NULL, NULL, &fname, sizeof fname)) { perror("prof.dump"); return 1; }
    return 0;
}
