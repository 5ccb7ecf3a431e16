/* signals.c - the main thread (the one memprof stops: lowest tid, asleep
 * in nanosleep) receives a stream of queued real-time signals from a
 * sender thread, each carrying its sequence number.  None may be lost,
 * duplicated or reordered by a remote call: the handler checks the order,
 * and on SIGUSR2 the sender stops and the totals are compared:
 * "SIGNALS OK sent=N handled=N held=N" or "SIGNALS LOST ...", where held
 * counts the signals sent while the main thread sat in a tracing stop (so
 * they arrived while memprof held it). */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>

#include "target_common.h"

static atomic_long handled, sent, held;
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

/* Is the main thread in a tracing stop ('t' in /proc/PID/task/PID/stat)? */
static int main_thread_held(int stat_fd)
{
    char buf[512];
    ssize_t n = stat_fd < 0 ? -1 : pread(stat_fd, buf, sizeof buf - 1, 0);
    if (n <= 0)
        return 0;
    buf[n] = 0;
    char *paren = strrchr(buf, ')');
    return paren && paren[1] == ' ' && paren[2] == 't';
}

static void *sender(void *arg)
{
    (void)arg;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task/%d/stat", (int)getpid(), (int)getpid());
    int stat_fd = open(path, O_RDONLY | O_CLOEXEC);
    while (!atomic_load(&stop_sending)) {
        union sigval v = { .sival_int = (int)atomic_load(&sent) };
        int while_held = main_thread_held(stat_fd);
        if (sigqueue(getpid(), SIGRTMIN, v) == 0) {
            atomic_fetch_add(&sent, 1);
            if (while_held && main_thread_held(stat_fd))
                atomic_fetch_add(&held, 1);
        }
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
    printf("SIGNALS %s sent=%ld handled=%ld held=%ld%s\n", s == h && !bad_order ? "OK" : "LOST",
           s, h, atomic_load(&held), bad_order ? " (out of order)" : "");
    fflush(stdout);
    for (;;)
        pause();
}
