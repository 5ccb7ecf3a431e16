/* glibc_churn.c - glibc malloc only: threads that allocate and free
 * without pause, each block filled with a pattern that is checked before
 * it is freed, for the sampler's lifecycle and SIGKILL tests (t_sampler_*).
 *
 *   glibc_churn [THREADS]   (default 3) prints "ready" once every worker
 *                           runs; each worker loops: malloc/calloc/realloc/
 *                           posix_memalign a block of a pseudo-random size
 *                           (16 B .. 64 KiB) in churn_alloc(), fills it,
 *                           keeps up to 256 live, checks and frees the
 *                           oldest; counts[i] counts worker i's blocks
 *                           (read from outside with nm + /proc/PID/mem).
 *                           A block whose pattern changed, or an
 *                           allocation that failed, prints "CORRUPT" and
 *                           aborts.
 *     SIGUSR1  one round in the main thread: round_keep() allocates
 *              1000 blocks (1000 x 2000 B), checks them, keeps them and
 *              prints "live round_keep 2000000 1000" and "round N ok";
 *              the blocks of the round before are freed first.
 */
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAXTHREADS 16
#define RING 256

volatile unsigned long counts[MAXTHREADS];
static int nthreads = 3;
static volatile int running;

static void corrupt(const char *what, int t)
{
    printf("CORRUPT %s in worker %d\n", what, t);
    fflush(stdout);
    abort();
}

struct blk { unsigned char *p; size_t n; unsigned char pat; };

__attribute__((noinline)) static void *churn_alloc(uint64_t r, size_t n)
{
    void *p = NULL;
    switch (r % 4) {
    case 0: return malloc(n);
    case 1: return calloc(1, n);
    case 2:
        p = malloc(n / 2 + 1);
        return p ? realloc(p, n) : NULL;
    default:
        if (posix_memalign(&p, 64, n))
            return NULL;
        return p;
    }
}

static void check_free(struct blk *b, int t)
{
    if (!b->p)
        return;
    for (size_t i = 0; i < b->n; i += 97)
        if (b->p[i] != b->pat)
            corrupt("pattern", t);
    if (b->p[b->n - 1] != b->pat)
        corrupt("pattern", t);
    free(b->p);
    b->p = NULL;
}

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    static __thread struct blk ring[RING];
    uint64_t x = 0x9e3779b97f4a7c15ull * (uint64_t)(t + 1);
    __atomic_add_fetch(&running, 1, __ATOMIC_SEQ_CST);
    for (unsigned long k = 0;; k++) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        size_t n = 16 + (x >> 20) % (64 << 10);
        if ((x >> 8) % 8)
            n = 16 + (x >> 20) % 512;              /* mostly small */
        struct blk *b = &ring[k % RING];
        check_free(b, t);
        b->p = churn_alloc(x >> 3, n);
        if (!b->p)
            corrupt("allocation", t);
        if (malloc_usable_size(b->p) < n)
            corrupt("usable size", t);
        b->n = n;
        b->pat = (unsigned char)(k * 31 + (unsigned long)t);
        memset(b->p, b->pat, n);
        counts[t] = k + 1;
    }
    return NULL;
}

static unsigned char *kept[1000];

__attribute__((noinline)) static void round_keep(int round)
{
    for (int i = 0; i < 1000; i++) {
        free(kept[i]);
        kept[i] = NULL;
    }
    for (int i = 0; i < 1000; i++) {
        kept[i] = malloc(2000);
        if (!kept[i])
            corrupt("allocation", -1);
        memset(kept[i], (unsigned char)i, 2000);
    }
    for (int i = 0; i < 1000; i++)
        if (kept[i][0] != (unsigned char)i || kept[i][1999] != (unsigned char)i)
            corrupt("pattern", -1);
    printf("live round_keep 2000000 1000\nround %d ok\n", round);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        nthreads = atoi(argv[1]);
    if (nthreads < 1 || nthreads > MAXTHREADS)
        return 2;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    sigprocmask(SIG_BLOCK, &set, NULL);
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (int i = 0; i < nthreads; i++) {
        pthread_t th;
        if (pthread_create(&th, NULL, worker, (void *)(intptr_t)i))
            return 1;
    }
    while (__atomic_load_n(&running, __ATOMIC_SEQ_CST) < nthreads)
        usleep(1000);
    printf("pid %d\nready\n", (int)getpid());
    for (int round = 1;;) {
        int sig;
        if (sigwait(&set, &sig) == 0 && sig == SIGUSR1)
            round_keep(round++);
    }
}
