/* siginfo_storm.c - a target whose main thread (the lowest tid, asleep in
 * nanosleep: the thread memprof borrows) receives a storm of kill()-sent
 * SIGUSR1 from a child process and the SIGCHLD of short-lived children a
 * second thread forks and reaps.  Every other thread blocks both, so only
 * the main thread takes them.  Its handlers check each siginfo: SIGUSR1
 * must say SI_USER and the storm child's pid, SIGCHLD CLD_EXITED and the
 * pid of a child this program forked.  It also takes a SIGSEGV sent by
 * kill() and notes its si_code and si_pid.  On SIGUSR2 it prints the
 * counts so far: "SIGINFO usr1=N usr1_altered=A chld=M chld_altered=B
 * segv=S segv_code=C segv_pid=P". */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/wait.h>

#include "target_common.h"

#define FORKED_SLOTS 4096

static pid_t storm_pid;
static atomic_int forked[FORKED_SLOTS];  /* pids of every child forked */
static atomic_uint nforked;
static atomic_long usr1, usr1_altered, chld, chld_altered;

static atomic_int report;
static atomic_long segv;
static atomic_int segv_code, segv_pid;

static int was_forked(pid_t pid)
{
    unsigned n = atomic_load(&nforked);
    for (unsigned i = 0; i < n && i < FORKED_SLOTS; i++)
        if (atomic_load(&forked[i]) == pid)
            return 1;
    return 0;
}

static void on_usr1(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)uc;
    atomic_fetch_add(&usr1, 1);
    if (si->si_code != SI_USER || si->si_pid != storm_pid)
        atomic_fetch_add(&usr1_altered, 1);
}

static void on_chld(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)uc;
    atomic_fetch_add(&chld, 1);
    if (si->si_pid == storm_pid)
        return;
    if (si->si_code != CLD_EXITED || !was_forked(si->si_pid))
        atomic_fetch_add(&chld_altered, 1);
}

static void on_segv(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)uc;
    atomic_store(&segv_code, si->si_code);
    atomic_store(&segv_pid, si->si_pid);
    atomic_fetch_add(&segv, 1);
}

static void on_usr2(int sig)
{
    (void)sig;
    atomic_store(&report, 1);
}

/* how: SIG_BLOCK or SIG_UNBLOCK, for the calling thread. */
static void storm_signals(int how)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    sigaddset(&set, SIGCHLD);
    sigaddset(&set, SIGUSR2);
    sigaddset(&set, SIGSEGV);
    pthread_sigmask(how, &set, NULL);
}

/* Fork children that exit as soon as their pid is recorded (a byte on a
 * pipe says so), reap each by pid (its SIGCHLD still goes to the main
 * thread first). */
static void *forker(void *arg)
{
    (void)arg;
    storm_signals(SIG_BLOCK);
    int go[2];
    if (pipe(go) < 0)
        return NULL;
    for (;;) {
        if (atomic_load(&nforked) >= FORKED_SLOTS) {
            sleep(1);
            continue;
        }
        pid_t p = fork();
        char byte = 0;
        if (p == 0)
            _exit(read(go[0], &byte, 1) == 1 ? 0 : 1);
        if (p > 0) {
            atomic_store(&forked[atomic_load(&nforked)], p);
            atomic_fetch_add(&nforked, 1);
            if (write(go[1], &byte, 1) != 1)
                kill(p, SIGKILL);
            while (waitpid(p, NULL, 0) < 0 && errno == EINTR)
                ;
        }
        usleep(2000);
    }
    return NULL;
}

int main(void)
{
    struct sigaction sa = { .sa_sigaction = on_usr1, .sa_flags = SA_SIGINFO | SA_RESTART };
    sigaction(SIGUSR1, &sa, NULL);
    sa.sa_sigaction = on_chld;
    sigaction(SIGCHLD, &sa, NULL);
    sa.sa_sigaction = on_segv;
    sigaction(SIGSEGV, &sa, NULL);
    signal(SIGUSR2, on_usr2);
    pid_t parent = getpid();
    /* Blocked until storm_pid is known; the threads inherit the mask. */
    storm_signals(SIG_BLOCK);
    /* The storm: its own process, so that its kill() is SI_USER. */
    storm_pid = fork();
    if (storm_pid == 0) {
        while (getppid() == parent) {
            kill(parent, SIGUSR1);
            usleep(30);
        }
        _exit(0);
    }
    pthread_t t, c;
    pthread_create(&t, NULL, forker, NULL);
    pthread_create(&c, NULL, churn_forever, NULL);
    storm_signals(SIG_UNBLOCK);
    announce_ready();
    for (;;) {
        struct timespec ts = { 0, 20000000 };
        nanosleep(&ts, NULL);
        if (atomic_exchange(&report, 0)) {
            printf("SIGINFO usr1=%ld usr1_altered=%ld chld=%ld chld_altered=%ld segv=%ld "
                   "segv_code=%d segv_pid=%d\n", atomic_load(&usr1),
                   atomic_load(&usr1_altered), atomic_load(&chld),
                   atomic_load(&chld_altered), atomic_load(&segv),
                   atomic_load(&segv_code), atomic_load(&segv_pid));
            fflush(stdout);
        }
    }
}
