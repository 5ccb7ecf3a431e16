/* jemalloc_idle_dirty.c - an idle jemalloc process holding dirty pages:
 * 64 MiB allocated in 64 KiB blocks (large extents, beyond the thread
 * cache), each written, then all freed, then nothing more: no thread
 * allocates again, so decay never advances (unless background_thread is
 * on) and with a long dirty_decay_ms (the test's MALLOC_CONF) the freed
 * pages stay resident as dirty.  Prints "planted BYTES" (64 MiB), then
 * "ready", then sleeps in pause(). */
#include "target_common.h"

#define BLOCK ((size_t)64 << 10)
#define TOTAL ((size_t)64 << 20)

int main(void)
{
    static char *blocks[TOTAL / BLOCK];
    for (size_t i = 0; i < TOTAL / BLOCK; i++) {
        blocks[i] = malloc(BLOCK);
        if (!blocks[i])
            return 2;
        memset(blocks[i], 0x5a, BLOCK);
    }
    for (size_t i = 0; i < TOTAL / BLOCK; i++)
        free(blocks[i]);
    printf("planted %zu\n", TOTAL);
    announce_ready();
    for (;;)
        pause();
}
