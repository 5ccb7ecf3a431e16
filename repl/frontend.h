/* frontend.h - where command lines come from: a readline prompt on a
 * terminal, or batch (stdin, -e, -x).  Signals that end the session are
 * noted here and checked between commands. */
#ifndef MEMPROF_FRONTEND_H
#define MEMPROF_FRONTEND_H

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>

#include "session/session.h"

/* Set by SIGTERM/SIGHUP (the signal number); the session then ends cleanly. */
extern volatile sig_atomic_t frontend_stop_signal;

/* Install SIGINT/SIGTERM/SIGHUP handlers (no SA_RESTART) and ignore SIGPIPE. */
void frontend_signals_install(void);

/* Run lines from f until EOF, quit, a stop signal, or (batch) the first
 * failing command, whose error is prefixed "NAME:LINE: ".  Returns 0 when
 * every command succeeded. */
int frontend_batch(struct session *s, FILE *f, const char *name);

/* For a command that runs until Ctrl-C (the live views): at the prompt,
 * hold Ctrl-C off around a call into the process (as for CMD_CALLS_TARGET
 * commands; a Ctrl-C meanwhile is kept for later), and take a Ctrl-C as
 * handled (true when there was one; the prompt then does not call the
 * command interrupted).  In batch they do nothing and return false: there
 * Ctrl-C ends the session (frontend_stop_signal). */
void frontend_hold_interrupt(void);
void frontend_release_interrupt(void);
bool frontend_take_interrupt(void);

/* The interactive readline prompt; failures do not end it.  Returns 0. */
int frontend_interactive(struct session *s);

#endif
