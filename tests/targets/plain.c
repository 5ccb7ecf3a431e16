/* plain.c - an ordinary program linked with the shared libjemalloc: a
 * worker thread churning allocations, the main thread asleep. */
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
