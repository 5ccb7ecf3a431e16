/* alloc_frames.c - user functions whose names end like allocator entry
 * points, holding known bytes, in a profile the program dumps itself:
 *
 *   alloc_frames FILE    writes its heap profile to FILE and exits
 *
 * Run with MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:0 (every
 * allocation sampled, so the bytes are exact):
 *   path_calloc()    100 x calloc(1, 4096)                 409,600 B
 *   path_realloc()   120 x realloc(realloc(NULL, 64), 4096) 491,520 B
 *   my_malloc()       64 x malloc(8192)                    524,288 B
 * each called from main.  Every size is a jemalloc size class; the
 * functions are noinline and not tail calls, so each is a frame. */
#include <jemalloc/jemalloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *keep[1000];
static size_t nkeep;

static void hold(void *p)
{
    if (!p) {
        perror("alloc_frames");
        exit(1);
    }
    keep[nkeep++] = p;
}

__attribute__((noinline)) void path_calloc(void)
{
    for (int i = 0; i < 100; i++)
        hold(calloc(1, 4096));
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void path_realloc(void)
{
    for (int i = 0; i < 120; i++) {
        void *p = realloc(NULL, 64);
        hold(realloc(p, 4096));
    }
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void my_malloc(void)
{
    for (int i = 0; i < 64; i++)
        hold(malloc(8192));
    __asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: alloc_frames FILE\n");
        return 2;
    }
    path_calloc();
    path_realloc();
    my_malloc();
    const char *file = argv[1];
    int rc = mallctl("prof.dump", NULL, NULL, &file, sizeof file);
    if (rc) {
        fprintf(stderr, "alloc_frames: prof.dump to %s failed (%s); run with "
                "MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:0\n", file,
                strerror(rc));
        return 1;
    }
    printf("done %zu\n", nkeep);
    return 0;
}
