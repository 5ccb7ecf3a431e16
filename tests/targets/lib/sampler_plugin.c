/* sampler_plugin.c - a library glibc_events dlopen()s while memprof's
 * sampler may already be in (t_sampler_fork_exec): plugin_keep()
 * allocates 100 x 16 KiB with malloc() through its own call table and
 * keeps them; returns the bytes kept by this call. */
#include <stdlib.h>
#include <string.h>

static void *kept[100000];
static size_t nkept;

__attribute__((noinline)) size_t plugin_keep(void)
{
    for (int i = 0; i < 100 && nkept < sizeof kept / sizeof kept[0]; i++) {
        void *p = malloc(16384);
        if (!p)
            abort();
        memset(p, 5, 16384);
        kept[nkept++] = p;
    }
    return 100 * 16384;
}
