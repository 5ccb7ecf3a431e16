/* sleepers.c - a single-threaded program (so memprof must stop exactly
 * this thread) asleep in nanosleep ("sleepers sleep") or blocked in read()
 * on a FIFO ("sleepers read FIFO").  Interrupting it
 * for a remote call must not shorten its sleep; the reader must get the
 * whole message in one read with no EINTR.  It also runs with SIGUSR1 and
 * SIGRTMIN+3 blocked and on a sigaltstack of its own, which a call must
 * leave as they were (a thread that restores itself with rt_sigreturn
 * takes both from its frame).  Prints "SLEEP EARLY"/"READ BAD"/"CONTEXT
 * BAD" on a violation, "SLEEP LONG" after a sleep that lasted over twice
 * its time (memprof's stops made it start over), "read ok" when the test's message arrived intact
 * and the context is unchanged, and "sleeps N" after each sleep. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>

#include "target_common.h"

#define MESSAGE "memprof-fifo-message-0123456789\n"
#define SLEEP_S 1.5

static const char *fifo;
static char altstack[64 * 1024];

static void context_set(void)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    sigaddset(&set, SIGRTMIN + 3);
    sigprocmask(SIG_BLOCK, &set, NULL);
    stack_t ss = { .ss_sp = altstack, .ss_size = sizeof altstack, .ss_flags = 0 };
    sigaltstack(&ss, NULL);
}

/* The mask and altstack context_set() left; exit 1 if anything changed. */
static void context_check(void)
{
    sigset_t now;
    stack_t ss;
    sigprocmask(SIG_BLOCK, NULL, &now);
    sigaltstack(NULL, &ss);
    int bad_mask = 0;
    for (int sig = 1; sig < SIGRTMIN + 8; sig++)
        bad_mask |= sigismember(&now, sig) != (sig == SIGUSR1 || sig == SIGRTMIN + 3);
    if (bad_mask || ss.ss_sp != altstack || ss.ss_size != sizeof altstack ||
        ss.ss_flags != 0) {
        printf("CONTEXT BAD mask=%d altstack=%p/%zu/%d\n", bad_mask, ss.ss_sp,
               ss.ss_size, ss.ss_flags);
        fflush(stdout);
        _exit(1);
    }
}

static void sleeper(void)
{
    for (unsigned n = 1;; n++) {
        struct timespec req = { 1, 500000000 };
        double t0 = mono_seconds();
        int rc = nanosleep(&req, NULL);
        double slept = mono_seconds() - t0;
        if (rc != 0 || slept < SLEEP_S) {
            printf("SLEEP EARLY rc=%d errno=%d slept=%.6f\n", rc, errno, slept);
            fflush(stdout);
            _exit(1);
        }
        context_check();
        if (slept > 2 * SLEEP_S)    /* started over rather than continued */
            printf("SLEEP LONG slept=%.6f\n", slept);
        printf("sleeps %u\n", n);
        fflush(stdout);
    }
}

static void reader(void)
{
    /* O_RDWR: open does not wait for a writer, read() does. */
    int fd = open(fifo, O_RDWR);
    announce_ready();
    char buf[256];
    ssize_t n = read(fd, buf, sizeof buf);
    if (n != (ssize_t)strlen(MESSAGE) || memcmp(buf, MESSAGE, (size_t)n) != 0) {
        printf("READ BAD n=%zd errno=%d\n", n, errno);
        fflush(stdout);
        _exit(1);
    }
    context_check();
    printf("read ok\n");
    fflush(stdout);
    pause();
}

int main(int argc, char **argv)
{
    context_set();
    if (argc >= 3 && strcmp(argv[1], "read") == 0) {
        fifo = argv[2];
        reader();
    } else if (argc >= 2 && strcmp(argv[1], "sleep") == 0) {
        announce_ready();
        sleeper();
    }
    fprintf(stderr, "usage: sleepers sleep | sleepers read FIFO\n");
    return 2;
}
