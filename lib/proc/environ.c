/* environ.c - a variable of /proc/PID/environ (environ.h). */
#include "lib/proc/environ.h"

#include <string.h>

const char *proc_environ_value(const char *env, size_t len, const char *var)
{
    size_t n = strlen(var);
    for (const char *e = env, *end = env + len; e < end; e += strnlen(e, (size_t)(end - e)) + 1)
        if ((size_t)(end - e) > n && strncmp(e, var, n) == 0 && e[n] == '=')
            return e + n + 1;
    return NULL;
}
