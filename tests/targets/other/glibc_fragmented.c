/* glibc_fragmented.c - glibc malloc only: memory a process has freed that
 * glibc keeps resident and only malloc_trim() gives back.
 *
 *   glibc_fragmented [threads N]      N: 0..7 extra arenas (default 0)
 *
 * The main arena gets 400 MiB in 64 KiB blocks (below the 128 KiB mmap
 * threshold, so they come from the brk heap), each touched; then one small
 * block is allocated last, at the top of the heap, and kept; then every
 * 64 KiB block is freed.  glibc gives back on its own only the top of a
 * heap (above its last live block: M_TRIM_THRESHOLD governs nothing
 * below it), so the 400 MiB stay resident as one free chunk under a live
 * one.  malloc_trim(0) walks every arena's free chunks and madvise()s them
 * away.  With "threads N", N more threads, one after the other, do the
 * same with 100 MiB each in an arena of their own (mmap'd heaps of 64 MiB
 * each), then idle, so N+1 arenas are fragmented.  Measured on Debian 12
 * (glibc 2.36): VmRSS 402 MiB after the frees, and so while it idles;
 * malloc_trim(0) then took it to 1.6 MiB (threads 2: 602 MiB to 1.6 MiB).
 *
 * Prints, all before "ready" (so a test that saw "ready" finds them):
 *   pid PID
 *   arena main: freed 419430400 bytes below a live block
 *   arena thread TID: freed 104857600 bytes below a live block   (each)
 *   rss BYTES                                   (VmRSS after the frees)
 *   ready
 * then idles (idle_forever: one tiny malloc/free every 100 ms).  It checks
 * its own claims and exits 2 saying which failed: every block came from
 * its arena's heap, not mmap (the size word before a glibc block has
 * IS_MMAPPED 0x2 clear, and NON_MAIN_ARENA 0x4 clear in the main arena,
 * set in a thread's); in the main arena the kept block lies above every
 * freed one, below the program break; and the frees lowered VmRSS by less
 * than a tenth of what they freed. */
#include <pthread.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "idle.h"

#define BLOCK      ((size_t)64 << 10)
#define MAIN_BYTES ((size_t)400 << 20)
#define THREAD_BYTES ((size_t)100 << 20)
#define MAX_THREADS 7   /* glibc makes a new arena per thread up to 8 */

/* The flag bits of a glibc chunk's size word, just before the block
 * (volatile: the compiler takes that word for malloc's, never written). */
static unsigned chunk_flags(const void *p)
{
    return (unsigned)(((const volatile size_t *)p)[-1] & 0x7);
}

/* Fills BYTES in BLOCK-sized blocks, keeps one small block above them,
 * frees the blocks.  Returns the kept block; *hi is the highest block. */
static void *fragment(size_t bytes, unsigned want_flags, uintptr_t *hi)
{
    size_t n = bytes / BLOCK;
    char **blocks = malloc(n * sizeof *blocks);  /* before the blocks: below them */
    REQUIRE(blocks, "out of memory");
    *hi = 0;
    for (size_t i = 0; i < n; i++) {
        blocks[i] = malloc(BLOCK);
        REQUIRE(blocks[i], "out of memory after %zu blocks", i);
        memset(blocks[i], 0x5a, BLOCK);
        REQUIRE((chunk_flags(blocks[i]) & 0x6) == want_flags,
                "block %zu is not from the arena's heap (flags %#x)", i, chunk_flags(blocks[i]));
        if ((uintptr_t)blocks[i] > *hi)
            *hi = (uintptr_t)blocks[i];
    }
    char *keep = malloc(64);  /* last: the top of the heap */
    REQUIRE(keep, "out of memory");
    memset(keep, 1, 64);
    for (size_t i = 0; i < n; i++)
        free(blocks[i]);
    free(blocks);
    return keep;
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static pid_t done_tid;
static void *kept[MAX_THREADS + 1];

static void *fragment_thread(void *arg)
{
    uintptr_t hi;
    void *k = fragment(THREAD_BYTES, 0x4, &hi);
    pthread_mutex_lock(&lock);
    kept[(intptr_t)arg] = k;
    done_tid = (pid_t)syscall(SYS_gettid);
    pthread_cond_signal(&cond);
    pthread_mutex_unlock(&lock);
    idle_forever();
    return NULL;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    long threads = 0;
    char *end = "";
    if (argc == 3 && strcmp(argv[1], "threads") == 0)
        threads = strtol(argv[2], &end, 10);
    else
        REQUIRE(argc == 1, "usage: glibc_fragmented [threads N]");
    REQUIRE(*end == '\0' && threads >= 0 && threads <= MAX_THREADS,
            "threads: a number from 0 to %d", MAX_THREADS);

    size_t rss0 = rss_bytes();
    uintptr_t hi;
    kept[0] = fragment(MAIN_BYTES, 0, &hi);
    REQUIRE((uintptr_t)kept[0] > hi && (uintptr_t)kept[0] < (uintptr_t)sbrk(0),
            "the kept block is not above the freed ones, in the brk heap");
    printf("pid %d\n", (int)getpid());
    printf("arena main: freed %zu bytes below a live block\n", MAIN_BYTES);

    for (long i = 1; i <= threads; i++) {
        pthread_t t;
        pthread_mutex_lock(&lock);
        done_tid = 0;
        REQUIRE(pthread_create(&t, NULL, fragment_thread, (void *)(intptr_t)i) == 0,
                "pthread_create failed");
        while (!done_tid)
            pthread_cond_wait(&cond, &lock);
        pthread_mutex_unlock(&lock);
        printf("arena thread %d: freed %zu bytes below a live block\n", (int)done_tid,
               THREAD_BYTES);
    }

    size_t freed = MAIN_BYTES + (size_t)threads * THREAD_BYTES;
    size_t rss = rss_bytes();
    REQUIRE(rss > rss0 + freed - freed / 10,
            "VmRSS is %zu after freeing %zu bytes: glibc gave them back by itself", rss, freed);
    printf("rss %zu\n", rss);
    printf("ready\n");
    idle_forever();
}
