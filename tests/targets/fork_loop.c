/* fork_loop.c - a process that forks in a tight loop (a pre-fork server
 * restarting workers, a shell-out per request): its main thread forks,
 * the child exits at once and is reaped, again and again; a second thread
 * churns allocations.  Prints "loops N" on SIGUSR1.  Arguments: "fork"
 * or "spin", and the MiB of heap each fork copies (16).  "spin": the main
 * thread only counts, the same load on the CPUs without a
 * fork: the fork-heavy benchmark (bench/fork.sh) compares the two. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <errno.h>
#include <sys/wait.h>

#include "target_common.h"

static atomic_ulong loops;
static volatile sig_atomic_t report;

static void on_usr1(int sig)
{
    (void)sig;
    report = 1;
}

static void *churner(void *arg)
{
    (void)arg;
    void *keep[256] = {0};
    unsigned seed = 1;
    for (;;)
        churn(keep, 256, &seed);
    return NULL;
}

int main(int argc, char **argv)
{
    bool spin = argc > 1 && strcmp(argv[1], "spin") == 0;
    signal(SIGUSR1, on_usr1);
    /* a heap of some size for each fork to copy (MiB, default 16) */
    size_t heap = (argc > 2 ? strtoul(argv[2], NULL, 10) : 16) << 20;
    void *hold = malloc(heap);
    if (hold)
        memset(hold, 1, heap);
    pthread_t t;
    pthread_create(&t, NULL, churner, NULL);
    announce_ready();
    for (;;) {
        pid_t child = spin ? -1 : fork();
        if (child == 0)
            _exit(0);
        if (child > 0) {
            while (waitpid(child, NULL, 0) < 0 && errno == EINTR)
                ;
        }
        atomic_fetch_add(&loops, 1);
        if (report) {
            report = 0;
            printf("loops %lu\n", atomic_load(&loops));
            fflush(stdout);
        }
    }
}
