/* fault_blockers.c - two threads asleep in nanosleep, alike but for their
 * signal masks: with "main" the main thread blocks SIGSEGV and SIGBUS, with
 * "none" neither thread blocks anything.  Prints "helper TID", then
 * "ready".  memprof should borrow the helper when the main thread blocks a
 * fault signal (a call faulting there would reset the program's handler),
 * and the main thread (the lowest tid) otherwise (t_attach_fault_blockers). */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/syscall.h>

#include "target_common.h"

static atomic_int helper_said;

static void *helper(void *arg)
{
    (void)arg;
    sigset_t none;
    sigemptyset(&none);
    pthread_sigmask(SIG_SETMASK, &none, NULL);
    printf("helper %ld\n", (long)syscall(SYS_gettid));
    fflush(stdout);
    atomic_store(&helper_said, 1);
    for (;;) {
        struct timespec ts = { 0, 200 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 2 || (strcmp(argv[1], "main") != 0 && strcmp(argv[1], "none") != 0)) {
        fprintf(stderr, "usage: fault_blockers main|none\n");
        return 2;
    }
    if (strcmp(argv[1], "main") == 0) {
        sigset_t faults;
        sigemptyset(&faults);
        sigaddset(&faults, SIGSEGV);
        sigaddset(&faults, SIGBUS);
        pthread_sigmask(SIG_BLOCK, &faults, NULL);
    }
    pthread_t t;
    if (pthread_create(&t, NULL, helper, NULL) != 0)
        return 1;
    while (!atomic_load(&helper_said)) {      /* its line first */
        struct timespec ts = { 0, 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
    announce_ready();
    for (;;) {
        struct timespec ts = { 0, 200 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
}
