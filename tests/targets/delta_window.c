/* delta_window.c - a jemalloc process for delta profiles (heap?seconds=N):
 * early_alloc keeps 8 MiB at start-up, before "ready"; each SIGUSR1 makes
 * window_alloc keep 8 MiB more (1 MiB blocks, touched), then print
 * "allocated N".  A delta profile over a window holding a SIGUSR1 names
 * window_alloc and not early_alloc.  Run with prof:true. */
#include <signal.h>

#include "target_common.h"

#define BLOCKS 8

static void *volatile kept[BLOCKS * 64];
static int nkept;

static void __attribute__((noinline)) keep_blocks(void)
{
    for (int i = 0; i < BLOCKS && nkept < BLOCKS * 64; i++) {
        kept[nkept] = malloc(1 << 20);
        if (kept[nkept])
            memset(kept[nkept], 1, 1 << 20);
        nkept++;
    }
}

static void __attribute__((noinline)) early_alloc(void)
{
    keep_blocks();
    __asm__ volatile("" ::: "memory");      /* not a tail call: a frame of its own */
}

static void __attribute__((noinline)) window_alloc(void)
{
    keep_blocks();
    __asm__ volatile("" ::: "memory");
}

int main(void)
{
    sigset_t usr1 = usr1_blocked();
    early_alloc();
    announce_ready();
    for (int n = 1;; n++) {
        int sig;
        if (sigwait(&usr1, &sig) != 0)
            continue;
        window_alloc();
        printf("allocated %d\n", n);
        fflush(stdout);
    }
}
