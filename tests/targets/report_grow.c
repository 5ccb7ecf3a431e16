/* report_grow.c - a process for the HTML report's tests: grow_steadily
 * keeps 32 KiB more every 100 ms (a steady leak, up to 256 MiB), a thread
 * churns (allocates and frees at random, holding about the same), and a
 * function whose symbol name is HTML markup (an <img> with an onerror
 * script, a <b> with an id) holds 1 MiB from start-up, as any program can
 * name its functions, to show that the page escapes it.
 * Run it with MALLOC_CONF=prof:true. */
#include "target_common.h"

#define KIB 1024

static void *leaked, *held;

__attribute__((noinline)) void grow_steadily(void)
{
    void **block = malloc(32 * KIB);
    if (!block)
        exit(1);
    memset(block, 2, 32 * KIB);
    block[0] = leaked;           /* a list, so nothing is lost to leak checks */
    leaked = block;
}

/* The assembler takes such a name only quoted. */
__attribute__((noinline)) void markup_alloc(void)
    __asm__("\"<img src=x onerror=window.mpInjected=1><b id=mp-injected>evil</b>\"");

void markup_alloc(void)
{
    for (int i = 0; i < 4; i++) {
        void **block = malloc(256 * KIB);
        if (!block)
            exit(1);
        memset(block, 3, 256 * KIB);
        block[0] = held;
        held = block;
    }
}

int main(void)
{
    markup_alloc();
    pthread_t t;
    pthread_create(&t, NULL, churn_forever, NULL);
    announce_ready();
    for (unsigned n = 0;; n++) {
        if (n < 256 * 1024 / 32)
            grow_steadily();
        usleep(100 * 1000);
    }
    return 0;
}
