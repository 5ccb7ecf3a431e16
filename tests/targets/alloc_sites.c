/* alloc_sites.c - a program with known allocation sites that dumps its
 * own heap profile twice, for the analysis tests.
 *
 *   alloc_sites DIR     writes DIR/a.heap, then DIR/b.heap, then exits
 *
 * Between the dumps (run it with MALLOC_CONF=prof:true,prof_active:true):
 *                       a.heap     b.heap
 *   leak_big()          16 MiB     64 MiB    (1 MiB blocks)
 *   leak_small()         8 MiB      8 MiB    (1 KiB blocks)
 *   temp_buffers()       4 MiB      0        (freed before b)
 *   recurse_alloc()      2 MiB      2 MiB    (at depth 5 of itself)
 *   thread_alloc()       4 MiB      4 MiB    (in a second thread)
 * Every function is noinline so each is a frame of its own. */
#include <jemalloc/jemalloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB (1024 * 1024)

static void *keep[100000];
static size_t nkeep;
static void *temp[4];

static void hold(void *p, size_t size)
{
    if (!p) {
        perror("malloc");
        exit(1);
    }
    memset(p, 1, size);
    keep[nkeep++] = p;
}

__attribute__((noinline)) void leak_big(int mib)
{
    for (int i = 0; i < mib; i++)
        hold(malloc(MIB), MIB);
}

__attribute__((noinline)) void leak_small(void)
{
    for (int i = 0; i < 8 * 1024; i++)
        hold(malloc(1024), 1024);
}

__attribute__((noinline)) void temp_buffers(void)
{
    for (int i = 0; i < 4; i++) {
        temp[i] = malloc(MIB);
        memset(temp[i], 2, MIB);
    }
}

__attribute__((noinline)) void free_temp_buffers(void)
{
    for (int i = 0; i < 4; i++)
        free(temp[i]);
}

__attribute__((noinline)) void recurse_alloc(int depth)
{
    if (depth > 0) {
        recurse_alloc(depth - 1);
        __asm__ volatile("" ::: "memory");   /* not a tail call */
        return;
    }
    hold(malloc(2 * MIB), 2 * MIB);
}

__attribute__((noinline)) void *thread_alloc(void *arg)
{
    (void)arg;
    for (int i = 0; i < 4; i++)
        hold(malloc(MIB), MIB);
    return NULL;
}

static void dump(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    const char *p = path;
    int rc = mallctl("prof.dump", NULL, NULL, &p, sizeof p);
    if (rc) {
        fprintf(stderr, "alloc_sites: prof.dump to %s failed (%s); run with "
                "MALLOC_CONF=prof:true,prof_active:true\n", path, strerror(rc));
        exit(1);
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: alloc_sites DIR\n");
        return 2;
    }
    pthread_t t;
    if (pthread_create(&t, NULL, thread_alloc, NULL) || pthread_join(t, NULL))
        return 1;
    leak_big(16);
    leak_small();
    temp_buffers();
    recurse_alloc(5);
    dump(argv[1], "a.heap");
    free_temp_buffers();
    leak_big(48);
    dump(argv[1], "b.heap");
    printf("done\n");
    return 0;
}
