/* sym_alloc.c - which function names belong to the allocator, so that the
 * analysis can strip the allocator's own frames from the top of each
 * stack.  Frames inside the jemalloc *object* are recognised by the
 * symbolizer from the mapping; this table is for a statically linked copy
 * (Redis, Rust's tikv-jemallocator, DuckDB, Arrow ...) whose functions carry
 * a build-time prefix such as je_, _rjem_ or duckdb_je_.
 *
 * Sources: jemalloc 5.3's profiling call path (prof_backtrace_impl,
 * je_prof_backtrace, je_prof_tctx_create, je_malloc_default, imalloc_body,
 * do_rallocx ...) and /usr/bin/jeprof's RemoveUninterestingFrames list. */
#include "lib/symbolize.h"

#include <string.h>

enum alloc_match {
    MATCH_EXACT,        /* the name itself, nothing more */
    MATCH_ANY_PREFIX,   /* name, or <any prefix ending in '_'>name */
    MATCH_STARTS,       /* name..., or <any prefix ending in '_'>name... */
    MATCH_JE_STARTS,    /* name... after nothing or a prefix ending in "je_":
                         * arena_ and tcache_ are too common as words to take
                         * any prefix (a user's my_arena_alloc is not ours) */
    MATCH_RAW_STARTS,   /* the raw (mangled) name starts with it */
    MATCH_CONTAINS,     /* anywhere in the name */
};

struct alloc_name {
    const char *text;
    enum alloc_match match;
};

/* The one list of allocator functions.  Keep it in sync with jemalloc's
 * profiling path when a new jemalloc version moves frames around. */
static const struct alloc_name alloc_names[] = {
    /* Entry points, also jemalloc's own prefixed exports (je_malloc,
     * _rjem_mallocx) and glibc's __libc_malloc. */
    {"malloc", MATCH_ANY_PREFIX},
    {"calloc", MATCH_ANY_PREFIX},
    {"realloc", MATCH_ANY_PREFIX},
    {"mallocx", MATCH_ANY_PREFIX},
    {"rallocx", MATCH_ANY_PREFIX},
    {"xallocx", MATCH_ANY_PREFIX},
    {"posix_memalign", MATCH_ANY_PREFIX},
    {"aligned_alloc", MATCH_ANY_PREFIX},
    {"memalign", MATCH_ANY_PREFIX},
    {"valloc", MATCH_ANY_PREFIX},
    {"pvalloc", MATCH_ANY_PREFIX},
    /* "*_free" would catch every list_free(): only the plain names. */
    {"free", MATCH_EXACT},
    {"cfree", MATCH_EXACT},
    /* jemalloc internals on the sampling path (static ones unprefixed). */
    {"prof_backtrace", MATCH_STARTS},     /* prof_backtrace_impl, je_prof_backtrace */
    {"prof_tctx_create", MATCH_STARTS},
    {"prof_alloc_prep", MATCH_STARTS},
    {"malloc_default", MATCH_STARTS},
    {"imalloc", MATCH_STARTS},            /* imalloc, imalloc_body */
    {"ialloc", MATCH_STARTS},
    {"do_rallocx", MATCH_STARTS},
    {"arena_", MATCH_JE_STARTS},
    {"tcache_", MATCH_JE_STARTS},
    /* C++ operator new and new[], every overload (nothrow, align_val_t):
     * _Znwm, _Znam, _ZnwmRKSt9nothrow_t, _ZnwmSt11align_val_t ...;
     * j instead of m on 32-bit targets. */
    {"_Znwm", MATCH_RAW_STARTS},
    {"_Znam", MATCH_RAW_STARTS},
    {"_Znwj", MATCH_RAW_STARTS},
    {"_Znaj", MATCH_RAW_STARTS},
    /* The same when a name reaches us already demangled (DWARF). */
    {"operator new", MATCH_RAW_STARTS},
    /* jemalloc's C++ front end: void* newImpl<false>(unsigned long), a
     * static template (mangled _ZL7newImplILb0EEPvm). */
    {"newImpl", MATCH_CONTAINS},
};

/* Does name equal text, or end in "_" + text? */
static bool matches_any_prefix(const char *name, const char *text)
{
    size_t n = strlen(name), t = strlen(text);
    if (n == t)
        return memcmp(name, text, t) == 0;
    return n > t && name[n - t - 1] == '_' && memcmp(name + n - t, text, t) == 0;
}

/* Does text occur at the start of name, or right after a '_' whose prefix
 * passes the je_ rule when je_only? */
static bool matches_start(const char *name, const char *text, bool je_only)
{
    for (const char *p = name; (p = strstr(p, text)); p++) {
        if (p == name)
            return true;
        if (p[-1] != '_')
            continue;
        if (!je_only || (p - name >= 3 && memcmp(p - 3, "je_", 3) == 0))
            return true;
    }
    return false;
}

bool symbol_is_allocator_name(const char *name)
{
    if (!name || !*name)
        return false;
    for (size_t i = 0; i < sizeof alloc_names / sizeof alloc_names[0]; i++) {
        const struct alloc_name *a = &alloc_names[i];
        bool hit = false;
        switch (a->match) {
        case MATCH_EXACT:
            hit = strcmp(name, a->text) == 0;
            break;
        case MATCH_ANY_PREFIX:
            hit = matches_any_prefix(name, a->text);
            break;
        case MATCH_STARTS:
            hit = matches_start(name, a->text, false);
            break;
        case MATCH_JE_STARTS:
            hit = matches_start(name, a->text, true);
            break;
        case MATCH_RAW_STARTS:
            hit = strncmp(name, a->text, strlen(a->text)) == 0;
            break;
        case MATCH_CONTAINS:
            hit = strstr(name, a->text) != NULL;
            break;
        }
        if (hit)
            return true;
    }
    return false;
}
