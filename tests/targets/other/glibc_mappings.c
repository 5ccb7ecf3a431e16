/* glibc_mappings.c - glibc malloc only, -O2 without frame pointers: a
 * process whose memory mapped by mmap and mremap is known per function,
 * mapped on request so that a sampler put in before sees every call.
 *
 *   glibc_mappings        prints "ready", then per signal:
 *     SIGUSR1  one round (below); prints "mapped FUNC BYTES COUNT" per
 *              function that keeps mappings, "heap big_heap BYTES COUNT",
 *              "errno kept" and "round N done"
 *     SIGUSR2  unmaps and frees everything kept; prints "released N"
 *
 * Per round:
 *   leak_mappings   256 x 1 MiB anonymous mmap, kept (one page touched)
 *   trim_mappings   128 x 2 MiB mmap, then half of each unmapped (the
 *                    upper half of even ones, the lower of odd ones): 1 MiB
 *                    of each kept
 *   map_small        64 x 1 MiB mmap, then grown by grow_mappings with
 *   grow_mappings    mremap (MREMAP_MAYMOVE) to 4 MiB each: the first
 *                    1 MiB stays map_small's, the 3 MiB each grew by
 *                    are grow_mappings'
 *   churn_mappings 1000 x 1 MiB mmap and munmap: never kept
 *   grow_break       64 x sbrk(2 MiB), kept (first round only); given
 *                    back with brk at SIGUSR2 when nothing moved the
 *                    break since
 *   big_heap         40 x malloc(2 MiB), kept: glibc maps each itself
 *                    (over its mmap threshold), which is heap, not a
 *                    mapping of the program's
 * and check_errno: errno as each call should leave it ("errno kept", or
 * "errno changed N").
 * The functions are called from run_round, called from main. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "signal_rounds.h"

#define MAXKEPT 4096
#define MiB (1UL << 20)

static struct { void *p; size_t len; } maps[MAXKEPT];
static size_t nmaps;
static void *heap[MAXKEPT];
static size_t nheap;
static unsigned errno_changed;   /* calls that left errno other than they should */

/* A macro, not a function: the mmap call is in the function named above
 * (an inlined function would show as a frame of its own). */
#define NEW_MAPPING(len) ({                                                      \
    errno = ESRCH;                                                            \
    char *p_ = mmap(NULL, (len), PROT_READ | PROT_WRITE,                      \
                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);                      \
    if (p_ == MAP_FAILED)                                                     \
        abort();                                                              \
    errno_changed += errno != ESRCH;                                          \
    p_[0] = 1;                                                                \
    (void *)p_;                                                               \
})

static void keep_map(void *p, size_t len)
{
    if (nmaps == MAXKEPT)
        abort();
    maps[nmaps].p = p;
    maps[nmaps++].len = len;
}

static void say(const char *kind, const char *what, size_t bytes, size_t count)
{
    printf("%s %s %zu %zu\n", kind, what, bytes, count);
}

__attribute__((noinline)) static void leak_mappings(void)
{
    for (int i = 0; i < 256; i++)
        keep_map(NEW_MAPPING(MiB), MiB);
    say("mapped", "leak_mappings", 256 * MiB, 256);
}

__attribute__((noinline)) static void trim_mappings(void)
{
    for (int i = 0; i < 128; i++) {
        char *p = NEW_MAPPING(2 * MiB);
        char *keep = i % 2 ? p + MiB : p;
        if (munmap(i % 2 ? p : p + MiB, MiB) != 0)
            abort();
        keep_map(keep, MiB);
    }
    say("mapped", "trim_mappings", 128 * MiB, 128);
}

__attribute__((noinline)) static void *map_small(void)
{
    return NEW_MAPPING(MiB);
}

__attribute__((noinline)) static void grow_mappings(void)
{
    for (int i = 0; i < 64; i++) {
        void *p = mremap(map_small(), MiB, 4 * MiB, MREMAP_MAYMOVE);
        if (p == MAP_FAILED)
            abort();
        keep_map(p, 4 * MiB);
    }
    say("mapped", "map_small", 64 * MiB, 64);
    say("mapped", "grow_mappings", 64 * 3 * MiB, 64);
}

__attribute__((noinline)) static void churn_mappings(void)
{
    for (int i = 0; i < 1000; i++)
        if (munmap(NEW_MAPPING(MiB), MiB) != 0)
            abort();
}

static char *break_start, *break_end;    /* what grow_break added */

__attribute__((noinline)) static void grow_break(void)
{
    for (int i = 0; i < 64; i++) {
        char *p = sbrk(2 * MiB);
        if (p == (void *)-1)
            abort();
        if (!break_start)
            break_start = p;
        break_end = p + 2 * MiB;
    }
    say("mapped", "grow_break", 64 * 2 * MiB, 64);
}

__attribute__((noinline)) static void big_heap(void)
{
    for (int i = 0; i < 40; i++) {
        char *p = malloc(2 * MiB);
        if (!p || nheap == MAXKEPT)
            abort();
        p[0] = 1;
        heap[nheap++] = p;
    }
    say("heap", "big_heap", 40 * 2 * MiB, 40);
}

/* Calls that fail say why in errno, and calls that succeed leave it: one
 * of each kind, and every mmap above. */
__attribute__((noinline)) static void check_errno(void)
{
    errno = 0;
    errno_changed += munmap((void *)1, 4096) != -1 || errno != EINVAL;
    errno = 0;
    errno_changed += mremap(NULL, 0, 0, 0) != MAP_FAILED || errno != EINVAL;
    errno = 0;
    errno_changed += mmap(NULL, 0, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) !=
                     MAP_FAILED || errno != EINVAL;
    void *p = NEW_MAPPING(4096);
    errno = ESRCH;
    errno_changed += munmap(p, 4096) != 0 || errno != ESRCH;
    printf(errno_changed ? "errno changed %u\n" : "errno kept\n", errno_changed);
}

__attribute__((noinline)) static void run_round(int n)
{
    leak_mappings();
    trim_mappings();
    grow_mappings();
    churn_mappings();
    if (!break_start)
        grow_break();
    big_heap();
    check_errno();
    printf("round %d done\n", n);
    fflush(stdout);
}

static void release_all(void)
{
    for (size_t i = 0; i < nmaps; i++)
        if (munmap(maps[i].p, maps[i].len) != 0)
            abort();
    for (size_t i = 0; i < nheap; i++)
        free(heap[i]);
    /* the break given back when nothing (malloc) moved it since */
    if (break_start && sbrk(0) == break_end && brk(break_start) != 0)
        abort();
    printf("released %zu\n", nmaps + nheap);
    fflush(stdout);
    nmaps = nheap = 0;
}

int main(void)
{
    ROUNDS_ON_SIGNALS(run_round, release_all);
}
