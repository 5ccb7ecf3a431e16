/* thread_stacks.c - a process whose RSS is known by part: N threads (the
 * argument, default 20) each touch 256 KiB of their own stack and block
 * in pause(); the main thread maps 32 MiB of anonymous memory with mmap
 * (not through the allocator) and touches it all, then prints "ready" and
 * blocks.  Nothing here calls the allocator beyond what the C library
 * and pthread_create do. */
#include <stdint.h>
#include <sys/mman.h>

#include "target_common.h"

#define STACK_TOUCHED (256 << 10)
#define MAPPED (32 << 20)

static pthread_barrier_t started;

static void *touch_stack(void *arg)
{
    (void)arg;
    volatile char buf[STACK_TOUCHED];
    for (size_t i = 0; i < sizeof buf; i += 4096)
        buf[i] = 1;
    pthread_barrier_wait(&started);
    for (;;)
        pause();
    return NULL;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 20;
    if (n < 1 || n > 1000)
        return 2;
    pthread_barrier_init(&started, NULL, (unsigned)n + 1);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 1 << 20);
    for (int i = 0; i < n; i++) {
        pthread_t t;
        if (pthread_create(&t, &attr, touch_stack, NULL) != 0)
            return 1;
    }
    char *m = mmap(NULL, MAPPED, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return 1;
    memset(m, 1, MAPPED);
    pthread_barrier_wait(&started);
    announce_ready();
    for (;;)
        pause();
}
