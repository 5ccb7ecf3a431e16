/* environ.h - a variable of a process's environment, from its
 * /proc/PID/environ (NUL-separated KEY=VALUE, written by the process: a
 * value is untrusted text, at most the file's length). */
#ifndef MEMPROF_PROC_ENVIRON_H
#define MEMPROF_PROC_ENVIRON_H

#include <stddef.h>

/* The value of var in env (len bytes), as getenv() would find it (the
 * first), or NULL.  It ends at the next NUL or at env + len: a caller
 * that reads it as a C string gives a NUL-terminated env. */
const char *proc_environ_value(const char *env, size_t len, const char *var);

#endif
