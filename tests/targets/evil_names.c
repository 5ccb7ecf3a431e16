/* evil_names.c - a program whose allocating function's symbol name, and
 * the source file its debug information names, hold terminal escape
 * sequences (set the title, clear the screen, turn text red), as any
 * program can name its functions, for the escaping tests.
 *
 * evil_alloc holds 8 MiB (8 blocks of 1 MiB) from start-up until killed.
 * Run it with MALLOC_CONF=prof:true,prof_active:true. */
#include <pthread.h>

#include "target_common.h"

#define MIB (1024 * 1024)

static void *held[8];

/* The assembler takes such a name only quoted. */
__attribute__((noinline)) void evil_alloc(void)
    __asm__("\"evil\x1b]0;pwned\x07\x1b[2J\x1b[31m\"");

#line 1 "evil\x1b[31m_source.c"
void evil_alloc(void)
{
    for (int i = 0; i < 8; i++) {
        held[i] = malloc(MIB);
        if (!held[i])
            exit(1);
        memset(held[i], 1, MIB);
    }
}

#line 32 "evil_names.c"
int main(void)
{
    evil_alloc();
    announce_ready();
    pthread_t t;
    pthread_create(&t, NULL, churn_forever, NULL);
    pthread_join(t, NULL);
    return 0;
}
