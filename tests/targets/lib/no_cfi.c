/* no_cfi.c - a shared library with code of its own and no call-frame
 * information (built without unwind tables, .eh_frame removed): a stack
 * through no_cfi_keep() stops there for memprof's sampler, and memprof
 * must name this library when it says so (t_sampler_cfi_note). */
#include <stdlib.h>
#include <string.h>

static void *kept[64];

__attribute__((noinline)) size_t no_cfi_keep(size_t n)
{
    size_t i;
    for (i = 0; i < n && i < 64; i++) {
        kept[i] = malloc(4096);
        if (!kept[i])
            abort();
        memset(kept[i], 7, 4096);
    }
    return i;
}
