/* heartbeat.c - for the pause benchmark: a thread that never sleeps reads
 * the clock in a loop and prints "gap US" whenever two reads are more than
 * 50 µs apart, i.e. whenever it was stopped (or descheduled).  The main
 * thread sleeps in pthread_join, so memprof stops it and not the heartbeat;
 * gdb stops both. */
#include <pthread.h>

#include "target_common.h"

static void *heartbeat(void *arg)
{
    (void)arg;
    double prev = mono_seconds();
    for (;;) {
        double now = mono_seconds();
        double gap_us = (now - prev) * 1e6;
        if (gap_us > 50) {
            printf("gap %.0f\n", gap_us);
            fflush(stdout);
            now = mono_seconds();
        }
        prev = now;
    }
    return NULL;
}

int main(void)
{
    pthread_t t;
    pthread_create(&t, NULL, heartbeat, NULL);
    announce_ready();
    pthread_join(t, NULL);
    return 0;
}
