/* anon_grow.c - an anonymous memory leak by mmap, for the growing-mapping
 * diagnosis: map_anon_leaky() maps 64 KiB at a time with mmap and writes
 * every page, keeping them; the kernel merges each new mapping into the
 * one before (below it), so the leak is one anonymous mapping that grows
 * downwards.  16 MiB are mapped before "ready"; each SIGUSR1 maps 32 MiB
 * more, then prints "grown N" (N MiB mapped in all).  Runs until killed. */
#include <sys/mman.h>

#include "target_common.h"

#define CHUNK ((size_t)64 << 10)
#define STEP  ((size_t)32 << 20)

__attribute__((noinline)) static size_t map_anon_leaky(size_t bytes)
{
    size_t done = 0;
    for (; done < bytes; done += CHUNK) {
        unsigned char *p = mmap(NULL, CHUNK, PROT_READ | PROT_WRITE,
                                MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            break;
        for (size_t off = 0; off < CHUNK; off += 4096)
            p[off] = 0x5a;
    }
    return done;
}

int main(void)
{
    sigset_t usr1 = usr1_blocked();
    size_t mapped = map_anon_leaky((size_t)16 << 20);
    announce_ready();
    for (int sig;;) {
        if (sigwait(&usr1, &sig) != 0)
            continue;
        mapped += map_anon_leaky(STEP);
        printf("grown %zu\n", mapped >> 20);
        fflush(stdout);
    }
}
