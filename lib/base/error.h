/* error.h - the one error type every layer fills in.
 *
 * A failure is a sentence for a person: what went wrong and what to do about
 * it.  Functions that can fail take a `struct mp_error *` and return -1 (or
 * NULL) after setting it; callers print err.msg as it is. */
#ifndef MEMPROF_ERROR_H
#define MEMPROF_ERROR_H

#include <stddef.h>

/* What kind of failure, for a front end that answers with a code rather
 * than a sentence alone (memprof serve's HTTP status).  mp_error_set makes
 * a message MP_ERROR_FAILED; the engine marks the few kinds it knows with
 * mp_error_mark; mp_error_prefix keeps the kind. */
enum mp_error_kind {
    MP_ERROR_FAILED,            /* anything else */
    MP_ERROR_NO_PROCESS,        /* no such process (exited, or never was) */
    MP_ERROR_BUSY,              /* another memprof holds the process */
    MP_ERROR_DENIED,            /* not permitted (ptrace rules, a policy) */
};

struct mp_error {
    char msg[1024];
    enum mp_error_kind kind;
};

/* Set the message (printf-style).  Always returns -1 so that
 * `return mp_error_set(err, ...)` reads naturally. */
int mp_error_set(struct mp_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Put context in front of an existing message: "ctx: old message". */
int mp_error_prefix(struct mp_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

void mp_error_clear(struct mp_error *err);
/* Mark the message as one of the kinds above; returns -1 like
 * mp_error_set, so that `return mp_error_mark(err, K)` follows it. */
int mp_error_mark(struct mp_error *err, enum mp_error_kind kind);

#endif
