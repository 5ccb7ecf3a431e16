/* leak_recent.c - a jemalloc process that, on SIGUSR1, leaks one known
 * block from a known function (leak_known_block, 300000 bytes kept for
 * ever) and allocates and frees a few others, then prints "leaked".  Run
 * with prof:true and a low lg_prof_sample so that jemalloc samples them;
 * otherwise idle, so that the record of recent allocations holds what
 * this program did after the signal. */
#include <signal.h>

#include "target_common.h"

static void *kept;
/* Seen from outside: the compiler may not drop a malloc/free pair. */
static void *volatile sink;

__attribute__((noinline)) static void *leak_known_block(void)
{
    char *p = malloc(300000);
    if (p)
        memset(p, 7, 300000);
    return p;
}

__attribute__((noinline)) static void churn_and_free(void)
{
    for (int i = 0; i < 16; i++) {
        sink = malloc(5000);
        if (sink)
            memset(sink, 1, 5000);
        free(sink);
    }
}

int main(void)
{
    sigset_t usr1 = usr1_blocked();
    announce_ready();
    int sig;
    while (sigwait(&usr1, &sig) != 0)
        ;
    churn_and_free();
    kept = leak_known_block();
    churn_and_free();
    printf("leaked %p\n", kept);
    fflush(stdout);
    for (;;)
        pause();
}
