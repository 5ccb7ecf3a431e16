/* say.h - how a session speaks to its operator, whichever front end runs
 * it: an error ("memprof: <where>: <msg>", escaped: messages quote the
 * target's names and paths) and status lines (attached, notes), both on
 * stderr so that stdout holds only answers. */
#ifndef MEMPROF_SAY_H
#define MEMPROF_SAY_H

#include "session/session.h"

/* Print an error for the user: "memprof: <msg>" on stderr, or
 * "memprof: <where>: <msg>" while a batch line runs (say_where). */
void say_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Where the command being run came from ("deploy.mp:12", "-e #3"), for
 * errors; NULL at the prompt and outside commands.  The string is copied. */
void say_where(const char *where);

/* A status line (attached, notes): on stderr, and not at all under -q
 * (s->quiet). */
void say_status(const struct session *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
