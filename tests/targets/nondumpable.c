/* nondumpable.c - plain's twin that makes itself non-dumpable
 * (prctl PR_SET_DUMPABLE 0, as ssh-agent and some daemons do): its /proc
 * entries then belong to root, and only a tracer with CAP_SYS_PTRACE may
 * trace it, even one running as its own user. */
#include <pthread.h>
#include <sys/prctl.h>

#include "target_common.h"

int main(void)
{
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) {
        perror("prctl");
        return 1;
    }
    pthread_t t;
    pthread_create(&t, NULL, churn_forever, NULL);
    announce_ready();
    pthread_join(t, NULL);
    return 0;
}
