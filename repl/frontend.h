/* frontend.h - where command lines come from: a readline prompt on a
 * terminal, or batch (stdin, -e, -x).  Signals that end the session are
 * noted here and checked between commands. */
#ifndef MEMPROF_FRONTEND_H
#define MEMPROF_FRONTEND_H

#include <signal.h>
#include <stdio.h>

#include "repl/session.h"

/* Set by SIGTERM/SIGHUP (the signal number); the session then ends cleanly. */
extern volatile sig_atomic_t frontend_stop_signal;

/* Install SIGINT/SIGTERM/SIGHUP handlers (no SA_RESTART) and ignore SIGPIPE. */
void frontend_signals_install(void);

/* Run lines from f until EOF, quit, a stop signal, or (batch) the first
 * failing command, whose error is prefixed "NAME:LINE: ".  Returns 0 when
 * every command succeeded. */
int frontend_batch(struct session *s, FILE *f, const char *name);

/* The interactive readline prompt; failures do not end it.  Returns 0. */
int frontend_interactive(struct session *s);

#endif
