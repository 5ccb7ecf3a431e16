/* say.c - how a session speaks to its operator (say.h): errors and status
 * lines on stderr, every error escaped in one place. */
#include "session/say.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "lib/base/text_escape.h"

static char error_where[300];

void say_where(const char *where)
{
    snprintf(error_where, sizeof error_where, "%s", where ? where : "");
}

void say_status(const struct session *s, const char *fmt, ...)
{
    if (s->quiet)
        return;
    va_list ap;
    fflush(s->out);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
}

void say_error(const char *fmt, ...)
{
    va_list ap;
    fflush(stdout);
    fputs("memprof: ", stderr);
    if (error_where[0]) {
        text_escape_put(stderr, error_where);   /* a script's name is the user's, still escaped */
        fputs(": ", stderr);
    }
    va_start(ap, fmt);
    char *msg = NULL;
    int n = vasprintf(&msg, fmt, ap);
    va_end(ap);
    /* Messages quote the target's names and paths: the one place every
     * error passes, so the one place they are escaped. */
    if (n >= 0)
        text_escape_put(stderr, msg);
    else
        fputs("(out of memory formatting the message)", stderr);
    free(msg);
    fputc('\n', stderr);
}
