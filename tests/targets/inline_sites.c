/* inline_sites.c - allocation sites inside always_inline helpers, built
 * with -O2 (see targets.mk), for the tests of inlined frames in every view.
 *
 *   inline_sites DIR    writes DIR/inl.heap, prints "done" and exits
 *
 * Run with MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:0 for
 * exact bytes:
 *   inl_buffer (inlined into outer_a)   64 x 64 KiB =  4 MiB
 *   inl_table  (inlined into outer_b)   32 x 32 KiB =  1 MiB
 * outer_a and outer_b are noinline: real frames holding the inlined ones. */
#include <jemalloc/jemalloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *keep[128];
static int nkeep;

static void *touched(void *p, size_t size)
{
    if (!p) {
        perror("inline_sites: allocation");
        exit(1);
    }
    return memset(p, 1, size);
}

static inline __attribute__((always_inline)) void inl_buffer(size_t size)
{
    keep[nkeep++] = touched(malloc(size), size);
}

static inline __attribute__((always_inline)) void inl_table(size_t size)
{
    keep[nkeep++] = touched(calloc(1, size), size);
}

__attribute__((noinline)) void outer_a(void)
{
    for (int i = 0; i < 64; i++) {
        inl_buffer(64 * 1024);
        __asm__ volatile("" ::: "memory");
    }
}

__attribute__((noinline)) void outer_b(void)
{
    for (int i = 0; i < 32; i++) {
        inl_table(32 * 1024);
        __asm__ volatile("" ::: "memory");
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: inline_sites DIR\n");
        return 2;
    }
    outer_a();
    outer_b();
    char path[4096];
    snprintf(path, sizeof path, "%s/inl.heap", argv[1]);
    const char *p = path;
    int rc = mallctl("prof.dump", NULL, NULL, &p, sizeof p);
    if (rc) {
        fprintf(stderr, "inline_sites: prof.dump to %s failed (%s); run with "
                "MALLOC_CONF=prof:true,prof_active:true\n", path, strerror(rc));
        return 1;
    }
    printf("done\n");
    return 0;
}
