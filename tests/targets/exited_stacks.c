/* exited_stacks.c - the stacks of exited threads glibc keeps: 500
 * threads (64 KiB stacks, so that all fit glibc's 40 MiB stack cache) run
 * at once, each writes 48 KiB of its stack, waits for all the others,
 * and ends; the main thread joins them all.  glibc then caches every
 * stack (giving back all but 16 KiB below where the thread ended).  Prints
 * "planted BYTES": the Rss of the mappings inside the threads' stacks
 * (pthread_getattr_np's ranges), read from its own smaps; then "ready",
 * then sleeps in pause(). */
#include <stdbool.h>
#include <stdint.h>

#include "target_common.h"

#define NTHREADS 500
#define STACK ((size_t)64 << 10)

static pthread_barrier_t all_running;
static uintptr_t lo[NTHREADS], hi[NTHREADS];

static void *worker(void *arg)
{
    size_t i = (size_t)(uintptr_t)arg;
    pthread_attr_t a;
    void *addr;
    size_t size;
    pthread_getattr_np(pthread_self(), &a);
    pthread_attr_getstack(&a, &addr, &size);
    pthread_attr_destroy(&a);
    lo[i] = (uintptr_t)addr;
    hi[i] = (uintptr_t)addr + size;
    volatile char buf[48 << 10];
    memset((char *)buf, 1, sizeof buf);
    pthread_barrier_wait(&all_running);
    return NULL;
}

static bool in_stack(uintptr_t start)
{
    for (size_t i = 0; i < NTHREADS; i++)
        if (start >= lo[i] && start < hi[i])
            return true;
    return false;
}

/* The Rss of this process's mappings that start inside a thread's stack. */
static size_t stacks_rss(void)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[512];
    size_t sum = 0, kib;
    bool in = false;
    while (f && fgets(line, sizeof line, f)) {
        unsigned long start, end;
        if (sscanf(line, "%lx-%lx ", &start, &end) == 2)
            in = in_stack(start);
        else if (in && sscanf(line, "Rss: %zu kB", &kib) == 1)
            sum += kib << 10;
    }
    if (f)
        fclose(f);
    return sum;
}

int main(void)
{
    pthread_t t[NTHREADS];
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setstacksize(&a, STACK);
    pthread_barrier_init(&all_running, NULL, NTHREADS);
    for (size_t i = 0; i < NTHREADS; i++)
        if (pthread_create(&t[i], &a, worker, (void *)(uintptr_t)i) != 0)
            return 2;
    for (size_t i = 0; i < NTHREADS; i++)
        pthread_join(t[i], NULL);
    printf("planted %zu\n", stacks_rss());
    announce_ready();
    for (;;)
        pause();
}
