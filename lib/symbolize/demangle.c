/* demangle.c - readable names for mangled symbols: C++ (Itanium ABI) and
 * Rust in both its schemes, legacy (_ZN...17h<hash>E, often with a
 * .llvm.NNNN suffix) and v0 (_R...), through libiberty's demangler (the
 * one c++filt uses, maintained with GCC and binutils) rather than one of
 * our own.  Output is what c++filt and rustc-demangle print: Rust hashes
 * and crate disambiguators dropped, $LT$/$GT$/$u20$ escapes decoded.  The
 * symbolizer caches results per interned name on top of this. */
#include "lib/symbolize/symbolize.h"

#include <stdlib.h>
#include <string.h>

#include <libiberty/demangle.h>

/* Parameters and const qualifiers as c++filt prints them; no DMGL_VERBOSE,
 * which would keep Rust's crate disambiguators ("alloc[f3a1...]::"). */
#define DEMANGLE_OPTIONS (DMGL_PARAMS | DMGL_ANSI)

char *symbol_demangle_alloc(const char *name)
{
    if (!name)
        return NULL;
    /* Only "_Z" (C++, Rust legacy) and "_R" (Rust v0) names are mangled
     * symbols: anything else would be parsed as a type ("i" would become
     * "int"). */
    if (strncmp(name, "_R", 2) == 0)
        return rust_demangle(name, DEMANGLE_OPTIONS);
    if (strncmp(name, "_Z", 2) != 0)
        return NULL;
    /* AUTO: C++ (GNU v3), then, when the result has the shape of a
     * legacy Rust name (a trailing 17h<16 hex> segment), Rust's own
     * rendering of it.  DMGL_RUST alone would refuse plain C++ names. */
    return cplus_demangle(name, DEMANGLE_OPTIONS | DMGL_AUTO);
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
