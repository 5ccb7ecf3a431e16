/* glibc_live.c - glibc malloc only, built -O2 without frame pointers (as
 * Debian builds its servers): a process whose live heap per function is
 * known exactly, allocated on request so that a sampler put in before the
 * request sees every allocation.
 *
 *   glibc_live            prints "ready", then per signal:
 *     SIGUSR1  one round: each keep_* function allocates and keeps its
 *              blocks, churn() allocates and frees 64 MiB (never live);
 *              prints "live keep_X BYTES COUNT" for each and "round N done"
 *     SIGUSR2  frees everything kept; prints "freed N"
 *
 * Per round (2,414 live blocks, under the sampler's table of 3,072, so
 * that at rate 0 every one is kept):
 *   keep_malloc          200 x 48 KiB      malloc
 *   keep_small          2000 x 1000 B      malloc
 *   keep_calloc          100 x 20000 B     calloc
 *   keep_realloc          50 x 64 KiB      malloc 1 KiB, realloc to 64 KiB
 *   keep_aligned          64 x 16 KiB      posix_memalign (4 KiB)
 * The keep_* functions are called from run_round, called from main:
 * stacks main -> run_round -> keep_X -> (allocator). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "signal_rounds.h"

#define MAXKEPT 100000

static void *kept[MAXKEPT];
static size_t nkept;

static void keep(void *p, size_t size)
{
    if (!p || nkept == MAXKEPT)
        abort();
    memset(p, 1, size);        /* touched: resident, and not optimised away */
    kept[nkept++] = p;
}

static void say(const char *what, size_t bytes, size_t count)
{
    printf("live %s %zu %zu\n", what, bytes, count);
}

__attribute__((noinline)) static void keep_malloc(void)
{
    for (int i = 0; i < 200; i++)
        keep(malloc(48 << 10), 48 << 10);
    say("keep_malloc", 200 * (48 << 10), 200);
}

__attribute__((noinline)) static void keep_small(void)
{
    for (int i = 0; i < 2000; i++)
        keep(malloc(1000), 1000);
    say("keep_small", 2000 * 1000, 2000);
}

__attribute__((noinline)) static void keep_calloc(void)
{
    for (int i = 0; i < 100; i++)
        keep(calloc(1, 20000), 20000);
    say("keep_calloc", 100 * 20000, 100);
}

__attribute__((noinline)) static void keep_realloc(void)
{
    for (int i = 0; i < 50; i++) {
        char *p = malloc(1024);
        if (!p)
            abort();
        p[0] = 1;
        keep(realloc(p, 64 << 10), 64 << 10);
    }
    say("keep_realloc", 50 * (64 << 10), 50);
}

__attribute__((noinline)) static void keep_aligned(void)
{
    for (int i = 0; i < 64; i++) {
        void *p = NULL;
        if (posix_memalign(&p, 4096, 16 << 10))
            abort();
        keep(p, 16 << 10);
    }
    say("keep_aligned", 64 * (16 << 10), 64);
}

__attribute__((noinline)) static void churn(void)
{
    for (int i = 0; i < 16384; i++) {
        volatile char *p = malloc(4096);
        if (!p)
            abort();
        p[0] = 1;
        free((void *)p);
    }
}

__attribute__((noinline)) static void run_round(int n)
{
    keep_malloc();
    keep_small();
    keep_calloc();
    keep_realloc();
    keep_aligned();
    churn();
    printf("round %d done\n", n);
    fflush(stdout);
}

static void free_all(void)
{
    for (size_t i = 0; i < nkept; i++)
        free(kept[i]);
    printf("freed %zu\n", nkept);
    fflush(stdout);
    nkept = 0;
}

int main(void)
{
    ROUNDS_ON_SIGNALS(run_round, free_all);
}
