/* reexec.c - a program that executes itself again every ~300 ms while two
 * threads allocate: the exec comes from the main thread in one generation
 * and from a third thread (which then takes the main thread's tid) in the
 * next, so memprof sessions meet an exec at every point of a stop.
 * "reexec [GEN]" prints "ready" in generation 0 and "gen N" in each. */
#include <pthread.h>

#include "target_common.h"

static char *self;
static char next_gen[16];

static void exec_next(void)
{
    char *argv[] = { self, next_gen, NULL };
    execv("/proc/self/exe", argv);
    perror("execv");
    exit(1);
}

static void *exec_thread(void *arg)
{
    (void)arg;
    exec_next();
    return NULL;
}

int main(int argc, char **argv)
{
    int gen = argc > 1 ? atoi(argv[1]) : 0;
    self = argv[0];
    snprintf(next_gen, sizeof next_gen, "%d", gen + 1);
    if (gen == 0)
        announce_ready();
    printf("gen %d\n", gen);
    fflush(stdout);
    pthread_t t;
    for (int i = 0; i < 2; i++)
        pthread_create(&t, NULL, churn_forever, NULL);
    usleep(300000);
    if (gen % 2 == 0)
        exec_next();
    pthread_create(&t, NULL, exec_thread, NULL);
    for (;;)
        pause();
}
