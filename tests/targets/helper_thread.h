/* helper_thread.h - a second thread that is a fine one to borrow: it
 * blocks for ever in read() of a pipe nobody writes (restartable, outside
 * any allocator).  Targets that park their main thread somewhere unsafe
 * start it so a debugger has another choice. */
#ifndef MEMPROF_HELPER_THREAD_H
#define MEMPROF_HELPER_THREAD_H

#include <errno.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

static volatile pid_t helper_tid;

static void *helper_thread(void *arg)
{
    (void)arg;
    helper_tid = (pid_t)syscall(SYS_gettid);
    int p[2];
    if (pipe(p) < 0)
        return NULL;
    char c;
    for (;;)
        if (read(p[0], &c, 1) < 0 && errno != EINTR)
            return NULL;
}

/* Start it and return its tid once it runs; 0 when it cannot start. */
static inline pid_t helper_start(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, helper_thread, NULL) != 0)
        return 0;
    while (!helper_tid)
        usleep(1000);
    return helper_tid;
}

#endif
