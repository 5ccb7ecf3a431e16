/* error.c - formatting of struct mp_error messages. */
#include "lib/base/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int mp_error_set(struct mp_error *err, const char *fmt, ...)
{
    if (!err)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    err->kind = MP_ERROR_FAILED;
    return -1;
}

int mp_error_prefix(struct mp_error *err, const char *fmt, ...)
{
    if (!err)
        return -1;
    char ctx[512], old[sizeof err->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx, sizeof ctx, fmt, ap);
    va_end(ap);
    memcpy(old, err->msg, sizeof old);
    /* Truncation is acceptable: the front of the message matters most. */
    size_t n = strlen(ctx);
    if (n > sizeof err->msg - 3)
        n = sizeof err->msg - 3;
    memcpy(err->msg, ctx, n);
    memcpy(err->msg + n, ": ", 2);
    size_t rest = sizeof err->msg - n - 3;
    size_t oldlen = strnlen(old, sizeof old);
    if (oldlen > rest)
        oldlen = rest;
    memcpy(err->msg + n + 2, old, oldlen);
    err->msg[n + 2 + oldlen] = '\0';
    return -1;
}

void mp_error_clear(struct mp_error *err)
{
    if (err) {
        err->msg[0] = '\0';
        err->kind = MP_ERROR_FAILED;
    }
}

int mp_error_mark(struct mp_error *err, enum mp_error_kind kind)
{
    if (err)
        err->kind = kind;
    return -1;
}
