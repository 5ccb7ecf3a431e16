/* demangle.c - C++ (Itanium ABI) demangling through libstdc++'s
 * __cxa_demangle, which memprof links anyway; one-off use.  The
 * symbolizer caches results per interned name on top of this. */
#include "lib/symbolize.h"

#include <stdlib.h>
#include <string.h>

/* libstdc++ exports this with C linkage; there is no C header for it. */
char *__cxa_demangle(const char *mangled, char *out, size_t *len, int *status);

char *symbol_demangle_alloc(const char *name)
{
    /* Only "_Z" names are mangled symbols: anything else would be parsed as
     * a type ("i" would become "int"). */
    if (!name || strncmp(name, "_Z", 2) != 0)
        return NULL;
    int status = 0;
    char *out = __cxa_demangle(name, NULL, NULL, &status);
    if (status != 0) {
        free(out);
        return NULL;
    }
    return out;
}

char *symbol_demangle(const char *name, char *buf, size_t buflen)
{
    if (!buflen)
        return buf;
    char *demangled = symbol_demangle_alloc(name);
    const char *src = demangled ? demangled : (name ? name : "");
    size_t len = strlen(src);
    if (len >= buflen)
        len = buflen - 1;
    memcpy(buf, src, len);
    buf[len] = '\0';
    free(demangled);
    return buf;
}
