/* static_rjem.c - jemalloc linked statically with mallctl renamed to
 * _rjem_mallctl, present only in .symtab (as tikv-jemallocator builds do).
 * Built PIE as static_rjem and non-PIE as static_nopie (targets.mk). */
#include <pthread.h>

#include "target_common.h"

static void *worker(void *arg)
{
    (void)arg;
    void *keep[256] = { 0 };
    unsigned seed = 1;
    for (;;) {
        churn(keep, 256, &seed);
        usleep(1000);
    }
    return NULL;
}

int main(void)
{
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    announce_ready();
    pthread_join(t, NULL);
    return 0;
}
