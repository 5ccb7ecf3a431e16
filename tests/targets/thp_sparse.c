/* thp_sparse.c - memory made resident by transparent huge pages, not by
 * the program: 64 MiB mapped 2 MiB-aligned, madvise(MADV_HUGEPAGE) (THP's
 * madvise mode gives huge pages to such ranges only), then one byte
 * written per 2 MiB.  Each write faults in a whole huge page, so the
 * 64 MiB are resident while the program wrote 32 pages of 4 KiB.  Prints
 * "planted BYTES" (the 4 KiB pages never written: 64 MiB - 32 x 4 KiB),
 * then "ready", then sleeps.  When the kernel gave no huge pages (THP
 * off, or none free) it says so on stderr and exits 2: a test that needs
 * the inflation fails saying why instead of passing on nothing. */
#include <stdint.h>
#include <sys/mman.h>

#include "target_common.h"

#define SIZE ((size_t)64 << 20)
#define HUGE ((size_t)2 << 20)

/* AnonHugePages of this process (smaps_rollup), in bytes. */
static size_t anon_huge(void)
{
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    char line[256];
    size_t kib = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "AnonHugePages: %zu kB", &kib) == 1)
            break;
    if (f)
        fclose(f);
    return kib << 10;
}

int main(void)
{
    char *raw = mmap(NULL, SIZE + HUGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                     -1, 0);
    if (raw == MAP_FAILED)
        return 2;
    char *p = (char *)(((uintptr_t)raw + HUGE - 1) & ~(uintptr_t)(HUGE - 1));
    if (madvise(p, SIZE, MADV_HUGEPAGE) != 0) {
        perror("thp_sparse: madvise(MADV_HUGEPAGE)");
        return 2;
    }
    for (size_t i = 0; i < SIZE; i += HUGE)
        p[i] = 1;
    size_t huge = anon_huge();
    if (huge < SIZE / 2) {
        fprintf(stderr, "thp_sparse: the kernel gave %zu KiB of huge pages for 64 MiB "
                "madvised MADV_HUGEPAGE: is /sys/kernel/mm/transparent_hugepage/enabled "
                "'never', or no huge page free?\n", huge >> 10);
        return 2;
    }
    printf("planted %zu\n", SIZE - SIZE / HUGE * 4096);
    announce_ready();
    for (;;)
        pause();
}
