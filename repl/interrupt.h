/* interrupt.h - the signals that reach memprof's front end (interrupt.c). */
#ifndef MEMPROF_INTERRUPT_H
#define MEMPROF_INTERRUPT_H

#include <signal.h>
#include <stdbool.h>

/* Set by SIGTERM/SIGHUP (the signal number), and by SIGINT in batch; the
 * session then ends cleanly. */
extern volatile sig_atomic_t interrupt_stop_signal;
/* Ctrl-C at the prompt (also the analysis engine's cancel flag), and
 * whether the prompt is where lines come from. */
extern volatile sig_atomic_t interrupt_sigint;
extern volatile sig_atomic_t interrupt_at_prompt;

/* Install SIGINT/SIGTERM/SIGHUP handlers (no SA_RESTART) and ignore SIGPIPE. */
void interrupt_install(void);

/* For a command that runs until Ctrl-C (the live views): at the prompt,
 * hold Ctrl-C off around a call into the process (as for CMD_CALLS_TARGET
 * commands; a Ctrl-C meanwhile is kept for later), and take a Ctrl-C as
 * handled (true when there was one; the prompt then does not call the
 * command interrupted).  In batch they do nothing and return false: there
 * Ctrl-C ends the session (interrupt_stop_signal). */
void interrupt_hold(void);
void interrupt_release(void);
bool interrupt_take(void);

#endif
