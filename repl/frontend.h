/* frontend.h - where command lines come from: a readline prompt on a
 * terminal, or batch (stdin, -e, -x); signals: interrupt.h. */
#ifndef MEMPROF_FRONTEND_H
#define MEMPROF_FRONTEND_H

#include <stdio.h>

#include "session/session.h"

/* Run lines from f until EOF, quit, a stop signal, or (batch) the first
 * failing command, whose error is prefixed "NAME:LINE: ".  Returns 0 when
 * every command succeeded. */
int frontend_batch(struct session *s, FILE *f, const char *name);

/* The interactive readline prompt; failures do not end it.  Returns 0. */
int frontend_interactive(struct session *s);

#endif
