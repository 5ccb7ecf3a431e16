/* glibc_parked.c - glibc malloc only: the main thread parked inside glibc's
 * allocator, beside a helper thread that is a fine choice; with "alone",
 * no helper, so every thread is inside the allocator.
 *
 *   glibc_parked FIFO [alone]
 *
 * The main thread calls malloc_info(0, fp) on an unbuffered FILE from
 * fopencookie(), whose write callback, the first time, says it is parked
 * and blocks in read() of FIFO (opened O_RDWR, so the open does not wait
 * for a writer): its stack is cookie_write <- libc's stdio (fputs) <-
 * malloc_info <- main.  It holds no allocator lock there (malloc_info
 * takes each arena's mutex only while it counts, and writes its first line
 * before any): the thread is unsafe by what is on its stack, not by a
 * lock.  It is the main thread, lowest tid, as in unsafe_frames.c: a
 * debugger that tries threads in tid order, at equal rank (both threads
 * blocked in read()), meets the parked one first.  The helper blocks in
 * read() of a pipe nobody writes.
 *
 * Prints:
 *   pid PID
 *   helper TID               (unless alone)
 *   parked TID               from inside the callback, then
 *   ready
 * When a line is written into FIFO, the callback returns, malloc_info
 * finishes writing, and the main thread prints "unparked ok" if
 * malloc_info returned 0 with its whole document ("<malloc version=...>"
 * to "</malloc>") captured, "UNPARKED BAD: why" otherwise, then idles
 * (idle_forever: one tiny malloc/free every 100 ms). */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../helper_thread.h"
#include "idle.h"

static int fifo_fd;
static int parked_once;
static char doc[1 << 16];
static size_t doc_len;
static int doc_overflow;

static void say(const char *s)
{
    if (write(1, s, strlen(s)) < 0)
        _exit(3);
}

static ssize_t cookie_write(void *cookie, const char *buf, size_t size)
{
    (void)cookie;
    if (!parked_once) {
        parked_once = 1;
        char line[64];
        snprintf(line, sizeof line, "parked %d\nready\n", (int)syscall(SYS_gettid));
        say(line);
        char msg[256];
        ssize_t n;
        do
            n = read(fifo_fd, msg, sizeof msg);
        while (n < 0 && errno == EINTR);
        if (n <= 0)
            say("UNPARKED BAD: reading the FIFO failed\n");
    }
    if (doc_len + size < sizeof doc) {
        memcpy(doc + doc_len, buf, size);
        doc_len += size;
    } else {
        doc_overflow = 1;
    }
    return (ssize_t)size;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    int alone = argc == 3 && strcmp(argv[2], "alone") == 0;
    REQUIRE(argc == 2 || alone, "usage: glibc_parked FIFO [alone]");
    fifo_fd = open(argv[1], O_RDWR);
    REQUIRE(fifo_fd >= 0, "cannot open %s: %s", argv[1], strerror(errno));
    printf("pid %d\n", (int)getpid());
    if (!alone) {
        pid_t helper = helper_start();
        REQUIRE(helper != 0, "pthread_create failed");
        printf("helper %d\n", (int)helper);
    }

    cookie_io_functions_t io = { .write = cookie_write };
    FILE *fp = fopencookie(NULL, "w", io);
    REQUIRE(fp, "fopencookie failed");
    setvbuf(fp, NULL, _IONBF, 0);   /* every write reaches the callback at once */
    int rc = malloc_info(0, fp);
    fclose(fp);

    static const char head[] = "<malloc version=", tail[] = "</malloc>\n";
    if (rc != 0)
        printf("UNPARKED BAD: malloc_info returned %d\n", rc);
    else if (doc_overflow || doc_len < sizeof tail ||
             memcmp(doc, head, sizeof head - 1) != 0 ||
             memcmp(doc + doc_len - (sizeof tail - 1), tail, sizeof tail - 1) != 0)
        printf("UNPARKED BAD: malloc_info wrote %zu bytes, not one whole document\n", doc_len);
    else
        printf("unparked ok\n");
    idle_forever();
}
