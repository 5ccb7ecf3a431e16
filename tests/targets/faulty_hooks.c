/* faulty_hooks.c - a program with one jemalloc arena of its own whose
 * extent hooks fault (a NULL write) when a thread memprof hijacked runs
 * them, i.e. one whose signal mask blocks SIGUSR2, which this program
 * never blocks itself.  `mallctl arena.N.purge` then faults inside the
 * allocator, with arena N's purge under way (and its locks taken).  The
 * arena holds dirty pages and never purges on its own (dirty_decay_ms -1).
 * Prints "arena N", then "ready"; the main thread sleeps.
 *
 *   faulty_hooks own_lock   the hooks do not fault: a hijacked thread takes
 *                           a mutex instead, one the main thread took (in
 *                           the program, not in the allocator) before it
 *                           sleeps; hijacked there, it waits on itself for
 *                           good, as a thread borrowed while it held an
 *                           allocator lock would. */
#include <jemalloc/jemalloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/mman.h>

#include "target_common.h"

static bool own_lock;
static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;

static void fault_if_hijacked(void)
{
    sigset_t cur;
    sigprocmask(SIG_BLOCK, NULL, &cur);
    if (!sigismember(&cur, SIGUSR2))
        return;
    if (own_lock)
        pthread_mutex_lock(&held);
    else
        *(volatile int *)0 = 1;
}

static void *hook_alloc(extent_hooks_t *h, void *new_addr, size_t size, size_t align,
                        bool *zero, bool *commit, unsigned arena)
{
    (void)h, (void)arena;
    fault_if_hijacked();
    if (new_addr)
        return NULL;
    char *p = mmap(NULL, size + align, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    uintptr_t a = ((uintptr_t)p + align - 1) & ~(uintptr_t)(align - 1);
    *zero = *commit = true;
    return (void *)a;
}

static bool hook_dalloc(extent_hooks_t *h, void *addr, size_t size, bool committed,
                        unsigned arena)
{
    (void)h, (void)addr, (void)size, (void)committed, (void)arena;
    fault_if_hijacked();
    return true;        /* keep the mapping: jemalloc retains it */
}

static bool hook_purge(extent_hooks_t *h, void *addr, size_t size, size_t off,
                       size_t len, unsigned arena)
{
    (void)h, (void)addr, (void)size, (void)off, (void)len, (void)arena;
    fault_if_hijacked();
    return true;        /* not purged */
}

static extent_hooks_t hooks = {
    .alloc = hook_alloc, .dalloc = hook_dalloc, .decommit = hook_purge,
    .purge_lazy = hook_purge, .purge_forced = hook_purge,
};

int main(int argc, char **argv)
{
    own_lock = argc > 1 && strcmp(argv[1], "own_lock") == 0;
    unsigned arena;
    size_t sz = sizeof arena;
    extent_hooks_t *hp = &hooks;
    if (mallctl("arenas.create", &arena, &sz, &hp, sizeof hp) != 0)
        return 1;
    char name[64];
    ssize_t never = -1;
    snprintf(name, sizeof name, "arena.%u.dirty_decay_ms", arena);
    if (mallctl(name, NULL, NULL, &never, sizeof never) != 0)
        return 1;
    int flags = MALLOCX_ARENA(arena) | MALLOCX_TCACHE_NONE;
    void *blocks[32];
    for (int i = 0; i < 32; i++) {
        blocks[i] = mallocx(64 * 1024, flags);
        if (!blocks[i])
            return 1;
        memset(blocks[i], i, 64 * 1024);
    }
    for (int i = 0; i < 32; i++)
        dallocx(blocks[i], MALLOCX_TCACHE_NONE);
    printf("arena %u\n", arena);
    if (own_lock)
        pthread_mutex_lock(&held);
    announce_ready();
    for (;;)
        sleep(1);
}
