/* error.h - the one error type every layer fills in.
 *
 * A failure is a sentence for a person: what went wrong and what to do about
 * it.  Functions that can fail take a `struct mp_error *` and return -1 (or
 * NULL) after setting it; callers print err.msg as it is. */
#ifndef MEMPROF_ERROR_H
#define MEMPROF_ERROR_H

#include <stddef.h>

struct mp_error {
    char msg[1024];
};

/* Set the message (printf-style).  Always returns -1 so that
 * `return mp_error_set(err, ...)` reads naturally. */
int mp_error_set(struct mp_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Put context in front of an existing message: "ctx: old message". */
int mp_error_prefix(struct mp_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

void mp_error_clear(struct mp_error *err);

#endif
