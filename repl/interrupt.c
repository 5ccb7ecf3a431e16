/* interrupt.c - the signals that reach memprof's front end: SIGINT
 * (Ctrl-C), and SIGTERM/SIGHUP that end the session cleanly between
 * commands.  At the prompt Ctrl-C only marks the command interrupted, and
 * is held off while a command calls into the process (so that attach/
 * never leaves a call half-way); in batch it ends the session like
 * SIGTERM. */
#include "repl/interrupt.h"

#include <string.h>

volatile sig_atomic_t interrupt_stop_signal;
volatile sig_atomic_t interrupt_sigint;
volatile sig_atomic_t interrupt_at_prompt; /* Ctrl-C clears the line only here */

static void on_signal(int sig)
{
    if (sig == SIGINT && interrupt_at_prompt)
        interrupt_sigint = 1;     /* also the analysis engine's cancel flag */
    else
        interrupt_stop_signal = sig;
}

void interrupt_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0; /* no SA_RESTART: a blocked read returns to check the flag */
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
}

/* While a command calls into the process, Ctrl-C is held off: blocked and
 * ignored, attach/ does not take it as a reason to leave a call half-way
 * (and end memprof, as in batch); it stays pending until the handler is
 * back, and then marks the command interrupted. */
static struct sigaction sigint_action;
static sigset_t sigint_mask;

static void hold_sigint(void)
{
    sigset_t set, pending;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigprocmask(SIG_BLOCK, &set, &sigint_mask);
    if (sigpending(&pending) == 0 && sigismember(&pending, SIGINT))
        interrupt_sigint = 1;     /* setting SIG_IGN discards it: noted first */
    struct sigaction ign;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigaction(SIGINT, &ign, &sigint_action);
}

static void release_sigint(void)
{
    sigaction(SIGINT, &sigint_action, NULL);
    sigprocmask(SIG_SETMASK, &sigint_mask, NULL);   /* a held Ctrl-C arrives now */
}

void interrupt_hold(void)
{
    if (interrupt_at_prompt)
        hold_sigint();
}

void interrupt_release(void)
{
    if (interrupt_at_prompt)
        release_sigint();
}

bool interrupt_take(void)
{
    bool was = interrupt_at_prompt && interrupt_sigint;
    if (was)
        interrupt_sigint = 0;
    return was;
}
