/* file_grow.c - a file mapping whose Rss grows when asked: the file
 * argv[1] is written with 64 MiB and mapped read-only, private; each
 * SIGUSR1 makes the main thread read one byte of each page of the next
 * 32 MiB through the mapping (page cache, resident in the process's RSS
 * once touched), then print "grown N" (N MiB touched in all).  Prints
 * "ready" once the file is mapped, nothing touched. */
#include <fcntl.h>
#include <sys/mman.h>

#include "target_common.h"

#define SIZE ((size_t)64 << 20)
#define STEP ((size_t)32 << 20)

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    sigset_t usr1 = usr1_blocked();
    int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    static char chunk[1 << 20];
    memset(chunk, 0x33, sizeof chunk);
    for (size_t i = 0; fd >= 0 && i < SIZE / sizeof chunk; i++)
        if (write(fd, chunk, sizeof chunk) != (ssize_t)sizeof chunk)
            return 2;
    const volatile char *p = fd >= 0 ? mmap(NULL, SIZE, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
    if (!p || p == MAP_FAILED)
        return 2;
    announce_ready();
    size_t touched = 0;
    unsigned sum = 0;
    for (int sig; touched < SIZE;) {
        if (sigwait(&usr1, &sig) != 0)
            continue;
        for (size_t end = touched + STEP; touched < end; touched += 4096)
            sum += (unsigned char)p[touched];
        printf("grown %zu (%u)\n", touched >> 20, sum & 1);
        fflush(stdout);
    }
    for (;;)
        pause();
}
