/* plain.c - an ordinary program: a worker thread churning allocations, the
 * main thread asleep.  targets.mk builds it four ways: linked with the
 * shared libjemalloc (plain), with glibc malloc only (nojemalloc, for the
 * "does not use jemalloc" error and LD_PRELOAD), and with jemalloc linked in
 * statically under the _rjem_ prefix, only in .symtab, as tikv-jemallocator
 * does (static_rjem as PIE, static_nopie not). */
#include <pthread.h>

#include "target_common.h"

int main(void)
{
    pthread_t t;
    pthread_create(&t, NULL, churn_forever, NULL);
    announce_ready();
    pthread_join(t, NULL);
    return 0;
}
