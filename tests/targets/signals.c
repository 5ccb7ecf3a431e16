/* signals.c - the main thread (the one memprof stops: lowest tid, asleep
 * in nanosleep) receives a stream of queued real-time signals from a
 * sender thread, each carrying its sequence number.  None may be lost,
 * duplicated or reordered by a remote call: the handler checks the order,
 * and on SIGUSR2 the sender stops and the totals are compared:
 * "SIGNALS OK sent=N handled=N" or "SIGNALS LOST ...". */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>

#include "target_common.h"

static atomic_long handled, sent;
static atomic_int stop_sending, bad_order;

static void on_rt(int sig, siginfo_t *info, void *uc)
{
    (void)sig;
    (void)uc;
    long expect = atomic_load(&handled);
    if (info->si_value.sival_int != (int)expect)
        atomic_store(&bad_order, 1);
    atomic_store(&handled, expect + 1);
}

static void on_usr2(int sig)
{
    (void)sig;
    atomic_store(&stop_sending, 1);
}

static void *sender(void *arg)
{
    (void)arg;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    while (!atomic_load(&stop_sending)) {
        union sigval v = { .sival_int = (int)atomic_load(&sent) };
        if (sigqueue(getpid(), SIGRTMIN, v) == 0)
            atomic_fetch_add(&sent, 1);
        usleep(50);
    }
    return NULL;
}

int main(void)
{
    struct sigaction sa = { .sa_sigaction = on_rt, .sa_flags = SA_SIGINFO | SA_RESTART };
    sigaction(SIGRTMIN, &sa, NULL);
    signal(SIGUSR2, on_usr2);
    pthread_t t;
    pthread_create(&t, NULL, sender, NULL);
    announce_ready();
    while (!atomic_load(&stop_sending)) {
        struct timespec ts = { 0, 20000000 };
        nanosleep(&ts, NULL);
    }
    pthread_join(t, NULL);
    usleep(200000);
    long s = atomic_load(&sent), h = atomic_load(&handled);
    printf("SIGNALS %s sent=%ld handled=%ld%s\n", s == h && !bad_order ? "OK" : "LOST", s, h,
           bad_order ? " (out of order)" : "");
    fflush(stdout);
    for (;;)
        pause();
}
