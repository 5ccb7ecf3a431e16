/* mdwe_heap.c - a jemalloc process that forbids itself writable-and-
 * executable memory (prctl PR_SET_MDWE, PR_MDWE_REFUSE_EXEC_GAIN, Linux
 * 6.3): memprof's capture region must respect W^X.  Otherwise idle.
 * Prints "ready mdwe=1 rwx=refused" when the kernel took the setting and
 * refuses the process a read-write-execute mapping. */
#include <sys/mman.h>
#include <sys/prctl.h>

#include "target_common.h"

#ifndef PR_SET_MDWE
#define PR_SET_MDWE 65
#endif
#define REFUSE_EXEC_GAIN 1

static void *volatile keep;

int main(void)
{
    int mdwe = prctl(PR_SET_MDWE, REFUSE_EXEC_GAIN, 0L, 0L, 0L) == 0;
    keep = malloc(1 << 20);
    void *rwx = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    printf("ready mdwe=%d rwx=%s\n", mdwe, rwx == MAP_FAILED ? "refused" : "allowed");
    fflush(stdout);
    for (;;)
        pause();
}
