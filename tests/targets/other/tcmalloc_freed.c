/* tcmalloc_freed.c - gperftools tcmalloc (Debian's 2.10): memory a process
 * has freed that tcmalloc keeps in its page heap, resident, until
 * MallocExtension_ReleaseFreeMemory() gives it back.  targets.mk builds it
 * twice: tcmalloc_freed (-ltcmalloc, the full library) and
 * tcmalloc_minimal_freed (-ltcmalloc_minimal); both say which they run.
 *
 *   tcmalloc_freed            (no arguments)
 *
 * Allocates about 300 MiB in blocks of varied sizes, each touched: nine
 * tenths of the bytes in large blocks (256 KiB to 4 MiB, each a span of its
 * own from the page heap), the rest in small ones (16 B to 32 KiB, carved
 * from spans of a size class).  Then frees nine blocks in ten: every block
 * but each tenth one, so the freed spans lie between live ones.
 *
 * What tcmalloc then does by itself (measured on Debian 12, 2.10, both
 * libraries): nothing goes back.  The freed bytes stay resident in the page
 * heap's free lists: pageheap_free about 281 MiB, pageheap_unmapped 0,
 * VmRSS about 310 MiB, and so it stays while the target idles.  tcmalloc
 * releases on frees only (no thread does it in the background): each span
 * freed counts its pages down, and only when the count runs out does it
 * give back a span or so, then counts again.  In a fresh process the first
 * such release came after well over a GiB freed: a loop freeing 270 MiB a
 * round first saw 5 MiB unmapped after 1.6 GiB (2.7 GiB with
 * TCMALLOC_RELEASE_RATE=10), and rates 0, 1, 10 and 100 all left this
 * target's pageheap_unmapped at 0.  Keeping one block in ten live also
 * keeps the freed spans apart, so a release, when one comes, is one span,
 * not all of them.  MallocExtension_ReleaseFreeMemory() took VmRSS from
 * about 312 MiB to about 45 MiB (pageheap_free 0, pageheap_unmapped
 * 281 MiB).  The target checks at each start that at least 200 MiB stay
 * in the page heap and exits 2 saying so otherwise.  Freed small blocks
 * sit in the thread cache and central lists, which ReleaseFreeMemory does
 * not empty.
 *
 * Prints, all before "ready":
 *   pid PID
 *   allocator tcmalloc|tcmalloc_minimal
 *   allocated BYTES in N blocks
 *   freed BYTES in N blocks
 *   pageheap_free BYTES          tcmalloc.pageheap_free_bytes (resident)
 *   pageheap_unmapped BYTES      tcmalloc.pageheap_unmapped_bytes (given back)
 *   rss BYTES                    VmRSS after the frees
 *   ready
 * then idles (idle_forever: one tiny malloc/free every 100 ms, served by
 * the thread cache: no free reaches the page heap, nothing is released). */
#include <gperftools/malloc_extension_c.h>
#include <unistd.h>

#include "idle.h"

#ifndef TCMALLOC_NAME
#error "targets.mk defines TCMALLOC_NAME: the library linked in"
#endif

#define TOTAL      ((size_t)300 << 20)
#define LARGE_MIN  ((size_t)256 << 10)
#define LARGE_MAX  ((size_t)4 << 20)
#define SMALL_MAX  ((size_t)32 << 10)
#define MAX_BLOCKS 100000

static char *blocks[MAX_BLOCKS];
static size_t sizes[MAX_BLOCKS];

static size_t property(const char *name)
{
    size_t v = 0;
    REQUIRE(MallocExtension_GetNumericProperty(name, &v), "tcmalloc lacks %s", name);
    return v;
}

int main(int argc, char **argv)
{
    (void)argv;
    setvbuf(stdout, NULL, _IONBF, 0);
    REQUIRE(argc == 1, "usage: tcmalloc_freed");
    /* Our malloc must be tcmalloc's: it knows the blocks as its own. */
    void *probe = malloc(100);
    REQUIRE(MallocExtension_GetOwnership(probe) == MallocExtension_kOwned,
            "malloc is not tcmalloc's");
    free(probe);

    unsigned seed = 42;
    size_t n = 0, total = 0, large = 0;
    while (total < TOTAL && n < MAX_BLOCKS) {
        size_t size;
        if (large < TOTAL / 10 * 9 && (n % 8 != 0 || total - large >= TOTAL / 10))
            size = LARGE_MIN + (size_t)rand_r(&seed) % (LARGE_MAX - LARGE_MIN);
        else
            size = 16 + (size_t)rand_r(&seed) % (SMALL_MAX - 16);
        blocks[n] = malloc(size);
        REQUIRE(blocks[n], "out of memory after %zu blocks", n);
        memset(blocks[n], 0x5a, size);
        sizes[n] = size;
        total += size;
        if (size >= LARGE_MIN)
            large += size;
        n++;
    }
    size_t freed = 0, nfreed = 0;
    for (size_t i = 0; i < n; i++)
        if (i % 10 != 0) {
            free(blocks[i]);
            freed += sizes[i];
            nfreed++;
        }

    size_t kept_free = property("tcmalloc.pageheap_free_bytes");
    size_t unmapped = property("tcmalloc.pageheap_unmapped_bytes");
    size_t rss = rss_bytes();
    REQUIRE(kept_free >= (size_t)200 << 20,
            "tcmalloc kept only %zu freed bytes in its page heap (%zu given back)",
            kept_free, unmapped);
    printf("pid %d\n", (int)getpid());
    printf("allocator %s\n", TCMALLOC_NAME);
    printf("allocated %zu in %zu blocks\n", total, n);
    printf("freed %zu in %zu blocks\n", freed, nfreed);
    printf("pageheap_free %zu\n", kept_free);
    printf("pageheap_unmapped %zu\n", unmapped);
    printf("rss %zu\n", rss);
    printf("ready\n");
    idle_forever();
}
