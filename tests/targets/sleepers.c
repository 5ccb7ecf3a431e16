/* sleepers.c - a single-threaded program (so memprof must stop exactly
 * this thread) asleep in nanosleep ("sleepers sleep") or blocked in read()
 * on a FIFO ("sleepers read FIFO").  Interrupting it
 * for a remote call must not shorten its sleep; the reader must get the
 * whole message in one read with no EINTR.  Prints "SLEEP EARLY"/"READ BAD"
 * on a violation, "read ok" when the test's message arrived intact, and
 * "sleeps N" after each sleep. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>

#include "target_common.h"

#define MESSAGE "memprof-fifo-message-0123456789\n"
#define SLEEP_S 1.5

static const char *fifo;

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
    printf("read ok\n");
    fflush(stdout);
    pause();
}

int main(int argc, char **argv)
{
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
