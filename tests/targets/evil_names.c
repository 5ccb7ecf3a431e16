/* evil_names.c - a program whose allocating function's symbol name, and
 * the source file its debug information names, hold terminal escape
 * sequences (set the title, clear the screen, turn text red), as any
 * program can name its functions, for the escaping tests.
 *
 * evil_alloc holds 8 MiB (8 blocks of 1 MiB) from start-up, and 8 MiB
 * more at each SIGUSR1 (then the program prints "grew"), until killed.
 * Run it with MALLOC_CONF=prof:true,prof_active:true. */
#include <pthread.h>
#include <signal.h>

#include "target_common.h"

#define MIB (1024 * 1024)

static void *held;

/* The assembler takes such a name only quoted. */
__attribute__((noinline)) void evil_alloc(void)
    __asm__("\"evil\x1b]0;pwned\x07\x1b[2J\x1b[31m\"");

#line 1 "evil\x1b[31m_source.c"
void evil_alloc(void)
{
    for (int i = 0; i < 8; i++) {
        void **block = malloc(MIB);
        if (!block)
            exit(1);
        memset(block, 1, MIB);
        block[0] = held;         /* a list, so nothing is lost to leak checks */
        held = block;
    }
}

#line 37 "evil_names.c"
int main(void)
{
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &usr1, NULL);   /* the churn thread inherits it */
    evil_alloc();
    pthread_t t;
    pthread_create(&t, NULL, churn_forever, NULL);
    announce_ready();
    for (int sig; sigwait(&usr1, &sig) == 0;) {
        evil_alloc();
        printf("grew\n");
        fflush(stdout);
    }
    return 0;
}
