/* many_maps.c - a process with N mappings (argv[1], default 10000), for
 * bench/memory_maps.sh: anonymous pages mapped one by one with
 * alternating protections (read-write, read-only) so that the kernel
 * cannot merge neighbours, each touched once; prints "ready" and sleeps. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 10000;
    long page = sysconf(_SC_PAGESIZE);
    char *base = mmap(NULL, (size_t)(n * page), PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED)
        return 2;
    for (long i = 0; i < n; i++) {
        base[i * page] = 1;
        if (i % 2 && mprotect(base + i * page, (size_t)page, PROT_READ) != 0)
            return 2;
    }
    printf("ready\n");
    fflush(stdout);
    for (;;)
        pause();
}
