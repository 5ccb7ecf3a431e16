/* mimalloc_idle.c - a program whose malloc is mimalloc's (Debian's 2.0,
 * linked with -lmimalloc, which overrides malloc and free): an allocator
 * memprof does not drive, for the "not an allocator memprof knows" paths.
 *
 *   mimalloc_idle             (no arguments)
 *
 * Allocates 1 MiB in 256 blocks of 4 KiB, touched and kept, and checks
 * that mimalloc owns them (mi_is_in_heap_region; otherwise it exits 2
 * saying malloc is not mimalloc's).  Prints, before "ready":
 *   pid PID
 *   allocator mimalloc VERSION     (mi_version(), e.g. 209)
 *   ready
 * then idles (idle_forever: one tiny malloc/free every 100 ms). */
#include <mimalloc.h>
#include <unistd.h>

#include "idle.h"

static char *blocks[256];

int main(int argc, char **argv)
{
    (void)argv;
    setvbuf(stdout, NULL, _IONBF, 0);
    REQUIRE(argc == 1, "usage: mimalloc_idle");
    for (size_t i = 0; i < 256; i++) {
        blocks[i] = malloc(4096);
        REQUIRE(blocks[i], "out of memory");
        memset(blocks[i], (int)i, 4096);
        REQUIRE(mi_is_in_heap_region(blocks[i]), "malloc is not mimalloc's");
    }
    printf("pid %d\n", (int)getpid());
    printf("allocator mimalloc %d\n", mi_version());
    printf("ready\n");
    idle_forever();
}
