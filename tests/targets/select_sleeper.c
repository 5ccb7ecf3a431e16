/* select_sleeper.c - the main thread (lowest tid, so the thread memprof
 * borrows first) loops on select(0, NULL, NULL, NULL, {0, 500 ms}) and
 * prints how long each call took ("select MS rc=R errno=E left=MS", left:
 * what the kernel wrote back into its timeval); a second thread keeps
 * the process company in sigwaitinfo(), which memprof tries last (an
 * interruption makes it return EINTR), so the select thread is the one
 * borrowed.  A borrowed select()
 * must resume with the time it had left: its durations show whether it
 * started its whole timeout again. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/select.h>

#include "target_common.h"

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
