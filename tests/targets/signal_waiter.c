/* signal_waiter.c - a single-threaded program (so memprof must stop exactly
 * this thread) that waits for SIGUSR1 in pause() ("signal_waiter pause") or
 * in sigsuspend() ("signal_waiter sigsuspend": SIGUSR1 open in the normal
 * mask too; "signal_waiter sigsuspend-blocked": the classic pattern, SIGUSR1
 * blocked except while it waits), forever.  Its SIGUSR1 handler writes
 * "handled N" (N: runs so far); each wait that ends writes "woke rc=R
 * errno=E handled=N mask=ok|BAD".  The kernel's rule: a wait ends exactly
 * once per handler run, with -1 EINTR, and afterwards the mask is the one
 * from before the wait.  SIGUSR2 stays blocked throughout, so that the mask
 * check sees a mask that is not empty.  "signal_waiter pause-seccomp": pause()
 * under a seccomp filter that kills the process for rt_sigsuspend, which
 * it never makes itself. */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "seccomp_install.h"
#include "target_common.h"

static atomic_int handled;

static void on_usr1(int sig)
{
    (void)sig;
    int n = atomic_fetch_add(&handled, 1) + 1;
    char line[32];
    int len = snprintf(line, sizeof line, "handled %d\n", n);
    if (write(STDOUT_FILENO, line, (size_t)len) < 0)
        _exit(3);
}

static void forbid_rt_sigsuspend(void)
{
    struct sock_filter prog[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_rt_sigsuspend, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    seccomp_install(prog, sizeof prog / sizeof prog[0]);
}

int main(int argc, char **argv)
{
    const char *mode = argc >= 2 ? argv[1] : "";
    bool filtered = strcmp(mode, "pause-seccomp") == 0;
    bool in_pause = filtered || strcmp(mode, "pause") == 0;
    bool blocked = strcmp(mode, "sigsuspend-blocked") == 0;
    if (!in_pause && !blocked && strcmp(mode, "sigsuspend") != 0) {
        fprintf(stderr, "usage: signal_waiter pause | sigsuspend | sigsuspend-blocked | "
                "pause-seccomp\n");
        return 2;
    }
    if (filtered)
        forbid_rt_sigsuspend();
    setvbuf(stdout, NULL, _IONBF, 0);
    struct sigaction sa = { .sa_handler = on_usr1 };
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
    sigset_t normal, waiting;
    sigemptyset(&normal);
    sigaddset(&normal, SIGUSR2);
    if (blocked)
        sigaddset(&normal, SIGUSR1);
    sigprocmask(SIG_SETMASK, &normal, NULL);
    sigemptyset(&waiting);
    sigaddset(&waiting, SIGRTMIN + 2);
    announce_ready();
    for (;;) {
        int rc = in_pause ? pause() : sigsuspend(&waiting);
        int e = errno;
        sigset_t now;
        sigprocmask(SIG_SETMASK, NULL, &now);
        bool mask_ok = true;
        for (int sig = 1; sig < SIGRTMAX; sig++)
            mask_ok &= sigismember(&now, sig) == sigismember(&normal, sig);
        printf("woke rc=%d errno=%s handled=%d mask=%s\n", rc,
               e == EINTR ? "EINTR" : strerror(e), atomic_load(&handled),
               mask_ok ? "ok" : "BAD");
    }
}
