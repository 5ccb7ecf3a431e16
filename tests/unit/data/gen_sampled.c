/* Makes a small real sampled heap_v2 dump (default lg_prof_sample, accum on). */
#include <jemalloc/jemalloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

void *volatile keep[40000];
int nkeep;

__attribute__((noinline)) void alloc_small(int n) { for (int i = 0; i < n; i++) keep[nkeep++] = malloc(1000); }
__attribute__((noinline)) void alloc_big(int n) { for (int i = 0; i < n; i++) keep[nkeep++] = malloc(100000); }
__attribute__((noinline)) void churn(int n) { for (int i = 0; i < n; i++) { void *volatile p = malloc(5000); free(p); } }

static void *worker(void *arg)
{
    (void)arg;
    const char *name = "pool worker 1";
    mallctl("thread.prof.name", NULL, NULL, &name, sizeof name);
    alloc_big(100);
    alloc_small(10000);
    return NULL;
}

int main(int argc, char **argv)
{
    const char *fname = argc > 1 ? argv[1] : "real2.heap";
    alloc_small(20000);
    alloc_big(200);
    churn(5000);
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    pthread_join(t, NULL);
    if (mallctl("prof.dump", NULL, NULL, &fname, sizeof fname)) { perror("prof.dump"); return 1; }
    return 0;
}
