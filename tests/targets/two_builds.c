/* two_builds.c - one program in two builds whose code differs (targets.mk
 * builds two_builds_b with -DOTHER_BUILD): the other build has functions
 * where this one has its allocation sites, so an address of one named from
 * the file of the other comes out as a wrong, confident name
 * (other_build_*).  A thread keeps allocating from build_site_* and holds
 * the blocks, so that every heap profile has them. */
#include <pthread.h>

#include "target_common.h"

#ifdef OTHER_BUILD
/* Code only in the other build, laid out before the sites (gcc keeps the
 * source order at -O1), so that the sites move and their old addresses
 * land in these. */
#define FILLER(n) \
    __attribute__((noinline)) unsigned other_build_##n(unsigned x) \
    { \
        for (unsigned i = 0; i < 64; i++) \
            x = x * 2654435761u + i * n; \
        return x ^ (x >> 7) ^ (x << 3) ^ (x >> 13) ^ (x << 5) ^ (x >> 17); \
    }
FILLER(1) FILLER(2) FILLER(3) FILLER(4) FILLER(5) FILLER(6) FILLER(7) FILLER(8)
FILLER(9) FILLER(10) FILLER(11) FILLER(12) FILLER(13) FILLER(14) FILLER(15) FILLER(16)
#endif

__attribute__((noinline)) void *build_site_small(size_t n)
{
    return malloc(n);
}

__attribute__((noinline)) void *build_site_big(size_t n)
{
    void *p = malloc(n * 16);
    if (p)
        memset(p, 1, n * 16);
    return p;
}

static void *hold(void *arg)
{
    (void)arg;
    static void *keep[4096];
    for (unsigned i = 0;; i = (i + 1) % 4096) {
        free(keep[i]);
        keep[i] = i % 2 ? build_site_big(4096) : build_site_small(512);
        if (i == 4095)
            usleep(10000);
    }
    return NULL;
}

int main(void)
{
    pthread_t t;
    pthread_create(&t, NULL, hold, NULL);
    announce_ready();
    pthread_join(t, NULL);
    return 0;
}
