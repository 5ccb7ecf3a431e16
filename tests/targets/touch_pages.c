/* touch_pages.c - a process whose RSS grows in one named function, for
 * `faults`: a thread calls touch_pages_leaky() every millisecond, which
 * maps 16 new anonymous pages and writes each (16 page faults there),
 * keeping them; at 64 MiB kept it checks every page still holds what it
 * wrote (abort() if not: a test sees the process die) and unmaps them all.
 * Another thread only churns the heap (some faults elsewhere, far fewer).
 * Prints "ready"; on SIGUSR1 prints "verified N" (rounds of 64 MiB checked
 * whole); runs until killed. */
#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>

#include "target_common.h"

#define PAGE       4096u
#define CHUNK      (16u * PAGE)
#define KEEP_MAX   1024u                 /* chunks: 64 MiB */

static void *kept[KEEP_MAX];
static unsigned nkept;
static atomic_ulong verified;
static volatile sig_atomic_t report;

__attribute__((noinline)) static void touch_pages_leaky(void)
{
    unsigned char *p = mmap(NULL, CHUNK, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return;
    for (unsigned off = 0; off < CHUNK; off += PAGE)
        memset(p + off, (int)((nkept + off / PAGE) & 0xff), 64);
    kept[nkept++] = p;
}

__attribute__((noinline)) static void check_and_release(void)
{
    for (unsigned i = 0; i < nkept; i++) {
        const unsigned char *p = kept[i];
        for (unsigned off = 0; off < CHUNK; off += PAGE)
            if (p[off] != ((i + off / PAGE) & 0xff))
                abort();
        munmap(kept[i], CHUNK);
    }
    nkept = 0;
    verified++;
}

static void *toucher(void *arg)
{
    (void)arg;
    for (;;) {
        touch_pages_leaky();
        if (nkept == KEEP_MAX)
            check_and_release();
        usleep(1000);
    }
    return NULL;
}

static void *churner(void *arg)
{
    void *keep[64] = {0};
    unsigned seed = 7;
    (void)arg;
    for (;;) {
        churn(keep, 64, &seed);
        usleep(2000);
    }
    return NULL;
}

static void on_usr1(int sig)
{
    (void)sig;
    report = 1;
}

int main(void)
{
    pthread_t a, b;
    signal(SIGUSR1, on_usr1);
    if (pthread_create(&a, NULL, toucher, NULL) || pthread_create(&b, NULL, churner, NULL))
        return 1;
    announce_ready();
    for (;;) {
        pause();
        if (report) {
            report = 0;
            printf("verified %lu\n", (unsigned long)verified);
            fflush(stdout);
        }
    }
}
