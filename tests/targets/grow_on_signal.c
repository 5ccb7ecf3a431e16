/* grow_on_signal.c - a jemalloc process whose heap grows by a known amount
 * when asked: each SIGUSR1 makes the main thread allocate (and touch)
 * another 64 MiB in 1 MiB blocks it keeps, then print "grown N" (N MiB in
 * all).  A worker churns a little; nothing here calls mallctl, so
 * jemalloc's statistics move only when someone writes epoch. */
#include <pthread.h>
#include <signal.h>

#include "target_common.h"

int main(void)
{
    /* Blocked in every thread and taken with sigwait: no request is lost
     * between two checks. */
    sigset_t usr1 = usr1_blocked();
    pthread_t t;
    pthread_create(&t, NULL, churn_forever, NULL);
    announce_ready();
    int mib = 0, sig;
    for (;;) {
        if (sigwait(&usr1, &sig) != 0)
            continue;
        for (int i = 0; i < 64; i++) {
            char *block = malloc(1 << 20);
            if (block)
                memset(block, 1, 1 << 20);
            mib++;
        }
        printf("grown %d\n", mib);
        fflush(stdout);
    }
}
