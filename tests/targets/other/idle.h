/* idle.h - what the targets of other allocators (tests/targets/other/,
 * none of them linked with jemalloc) share: idling like a quiet server,
 * reading a process's resident size, and saying a fact or failing loudly. */
#ifndef MEMPROF_TARGET_IDLE_H
#define MEMPROF_TARGET_IDLE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Asleep almost always, but alive: one tiny malloc/free every 100 ms,
 * which comes back from the allocator's small-size cache and so changes
 * nothing a test measures.  nanosleep is restarted after a stop. */
__attribute__((noreturn)) static inline void idle_forever(void)
{
    const struct timespec tick = { .tv_sec = 0, .tv_nsec = 100 * 1000 * 1000 };
    for (;;) {
        volatile char *p = malloc(24);
        if (p)
            p[0] = 1;
        free((void *)p);
        nanosleep(&tick, NULL);
    }
}

static inline void *idle_thread(void *arg)
{
    (void)arg;
    idle_forever();
    return NULL;
}

/* VmRSS of this process in bytes (0 if /proc says nothing). */
static inline size_t rss_bytes(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    size_t kib = 0;
    if (!f)
        return 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %zu kB", &kib) == 1)
            break;
    fclose(f);
    return kib * 1024;
}

/* A target that cannot set up what it claims exits at once, saying why. */
#define REQUIRE(cond, ...)                                                   \
    do {                                                                     \
        if (!(cond)) {                                                       \
            fprintf(stderr, __VA_ARGS__);                                    \
            fputc('\n', stderr);                                             \
            exit(2);                                                         \
        }                                                                    \
    } while (0)

#endif
