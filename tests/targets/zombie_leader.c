/* zombie_leader.c - a process whose main thread has exited: main starts
 * three allocating threads and calls pthread_exit, so the main thread stays
 * a zombie while the others run (its /proc/PID/maps, mem, exe, root and
 * environ then read empty or fail).  One worker prints "ready" once the
 * main thread is a zombie, then "churned N" every 100 ms, N the rounds of
 * allocation done so far, so tests see the process still works. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "target_common.h"

#define WORKERS 3

static atomic_ulong rounds;
static pid_t leader;

static bool leader_is_zombie(void)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/task/%d/stat", (int)leader, (int)leader);
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')');
    return p && p[1] == ' ' && p[2] == 'Z';
}

static void *worker(void *arg)
{
    void *keep[256] = { 0 };
    unsigned seed = (unsigned)(uintptr_t)arg;
    for (;;) {
        churn(keep, 256, &seed);
        atomic_fetch_add(&rounds, 1);
        usleep(1000);
    }
    return NULL;
}

static void *reporter(void *arg)
{
    (void)arg;
    while (!leader_is_zombie())
        usleep(10000);
    announce_ready();
    for (;;) {
        printf("churned %lu\n", (unsigned long)atomic_load(&rounds));
        fflush(stdout);
        usleep(100000);
    }
    return NULL;
}

int main(void)
{
    leader = getpid();
    pthread_t t;
    for (int i = 0; i < WORKERS; i++)
        pthread_create(&t, NULL, worker, (void *)(uintptr_t)(i + 1));
    pthread_create(&t, NULL, reporter, NULL);
    pthread_exit(NULL);
}
