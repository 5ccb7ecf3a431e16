/* fault_loop.c - a process that does little but take page faults, for
 * bench/faults.sh: at each SIGUSR1 it maps 32 MiB of anonymous memory,
 * writes one byte into each page (a minor fault each), unmaps it, nine
 * times, and prints the best round's nanoseconds per fault
 * ("ns_per_fault X").  Prints "ready" first. */
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define BYTES (32u << 20)
#define PAGE  4096u

static volatile sig_atomic_t go;

static void on_usr1(int sig)
{
    (void)sig;
    go = 1;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

__attribute__((noinline)) static void touch_round(void)
{
    volatile char *p = mmap(NULL, BYTES, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        _exit(1);
    for (unsigned off = 0; off < BYTES; off += PAGE)
        p[off] = 1;
    munmap((void *)p, BYTES);
}

int main(void)
{
    signal(SIGUSR1, on_usr1);
    printf("ready\n");
    fflush(stdout);
    for (;;) {
        while (!go)
            pause();
        go = 0;
        double best = 0;
        for (int r = 0; r < 9; r++) {
            double t0 = now();
            touch_round();
            double ns = (now() - t0) / (BYTES / PAGE);
            if (r == 0 || ns < best)
                best = ns;
        }
        printf("ns_per_fault %.1f\n", best);
        fflush(stdout);
    }
}
