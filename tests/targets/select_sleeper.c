/* select_sleeper.c - the main thread (lowest tid, so the thread memprof
 * borrows first) loops on select(0, NULL, NULL, NULL, {0, 500 ms}) and
 * prints how long each call took ("select MS rc=R errno=E left=MS", left:
 * what the kernel wrote back into its timeval); a second thread keeps
 * the process company in sigwaitinfo(), which memprof tries last (an
 * interruption makes it return EINTR), so the select thread is the one
 * borrowed.  A borrowed select()
 * must resume with the time it had left: its durations show whether it
 * started its whole timeout again.
 *
 * Before it says ready it allocates one block from each of 4096 call
 * paths and keeps them: run with lg_prof_sample:0 and profiling active,
 * every one is a sample, so each dump writes 4096 stacks and holds the
 * thread milliseconds on any machine, long beside the microseconds of a
 * stop's own entry and exit that the test must tell apart from it. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/select.h>

#include "target_common.h"

#define PATH_BITS 12
void *kept[1u << PATH_BITS]; /* not static: the blocks must be kept */
static unsigned nkept;

static void path_step(int depth);
/* Two callers per level: each leaf is reached by its own stack.  The
 * empty asm after each call keeps it from becoming a tail jump. */
__attribute__((noinline)) static void path_left(int depth)
{
    path_step(depth - 1);
    __asm__ volatile("");
}
__attribute__((noinline)) static void path_right(int depth)
{
    path_step(depth - 1);
    __asm__ volatile("");
}
__attribute__((noinline)) static void path_step(int depth)
{
    if (depth == 0) {
        kept[nkept++] = malloc(64);
        return;
    }
    path_left(depth);
    path_right(depth);
}

static void *waiter(void *arg)
{
    (void)arg;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR2);
    for (;;)
        sigwaitinfo(&set, NULL);
    return NULL;
}

int main(void)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR2);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    pthread_t t;
    pthread_create(&t, NULL, waiter, NULL);
    path_step(PATH_BITS);
    announce_ready();
    for (;;) {
        struct timeval tv = { 0, 500000 };
        double t0 = mono_seconds();
        int rc = select(0, NULL, NULL, NULL, &tv);
        int e = errno;
        printf("select %.1f rc=%d errno=%d left=%.1f\n", (mono_seconds() - t0) * 1e3, rc,
               rc < 0 ? e : 0, tv.tv_sec * 1e3 + tv.tv_usec / 1e3);
        fflush(stdout);
    }
}
