/* alloc_frames.c - which frames belong to the allocator, so that the analysis
 * can strip them from the top of each stack and charge the first caller
 * outside it.  Two rules, and nothing else (a user's path_calloc or
 * my_malloc is never hidden for its name):
 *
 *   1. Where the code is: inside a libjemalloc* object (the symbolizer
 *      checks the mapping), or inside the code range of a jemalloc copy
 *      linked into a bigger object (jemalloc_code_ranges below).
 *   2. What the function is: an exact, listed entry point into the
 *      allocator (symbol_is_allocator_name below): the C allocation API,
 *      C++ operator new, and Rust's global-allocator shims.
 *
 * Sources: jemalloc 5.x's public API and --with-jemalloc-prefix /
 * --with-private-namespace conventions; glibc 2.36 (malloc.c, ld.so's
 * rtld-malloc.h); the Itanium C++ ABI; Rust's std/alloc (library/alloc/src/
 * alloc.rs, raw_vec.rs; the __rust_* / __rg_* / __rdl_* shims rustc
 * generates for #[global_allocator]). */
#include "lib/symbolize/alloc_frames.h"

#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- rule 2: listed entry points ---- */

/* The C allocation API.  Each name counts alone or after a jemalloc
 * prefix (je_malloc, _rjem_mallocx, duckdb_je_calloc: see
 * is_allocator_prefix), glibc's, ld.so's or a sanitizer's. */
static const char *const c_entry_points[] = {
    "malloc", "calloc", "realloc", "reallocarray", "free", "cfree",
    "posix_memalign", "aligned_alloc", "memalign", "valloc", "pvalloc",
    "mallocx", "rallocx", "xallocx", "sdallocx", "dallocx", "nallocx",
};

/* Rust: the shims rustc emits for the global allocator (__rust_*, which
 * call __rg_* for a #[global_allocator] or __rdl_* for std's System), with
 * or without the __rustc:: path newer compilers give them. */
static const char *const rust_shims[] = {
    "__rust_alloc", "__rust_alloc_zeroed", "__rust_realloc", "__rust_dealloc",
    "__rg_alloc", "__rg_alloc_zeroed", "__rg_realloc", "__rg_dealloc",
    "__rdl_alloc", "__rdl_alloc_zeroed", "__rdl_realloc", "__rdl_dealloc",
};

/* Rust modules whose every function is the way into the allocator:
 * alloc::alloc (alloc, realloc, exchange_malloc, Global's Allocator impl)
 * and alloc::raw_vec (finish_grow, grow_amortized, reserve_for_push...,
 * where every Vec/String growth goes out of line). */
static const char *const rust_alloc_modules[] = {
    "alloc::alloc::", "alloc::raw_vec::",
};

#define RUST_GLOBAL_ALLOC "core::alloc::global::GlobalAlloc"

/* Prefixes jemalloc builds put on its API: "je_", "_rjem_", anything
 * ending in "je_" (duckdb_je_, _rjem_je_); glibc's "__libc_"; ld.so's
 * "__minimal_" (the allocator it uses before libc's); the sanitizer
 * runtimes' interceptors ("__interceptor_", "___interceptor_" in newer
 * LLVM), which are the malloc of an ASan build. */
static bool is_allocator_prefix(const char *p, size_t len)
{
    static const char *const fixed[] = {
        "_rjem_", "__libc_", "__minimal_", "__interceptor_", "___interceptor_",
    };
    if (len == 0)
        return true;
    if (len >= 3 && memcmp(p + len - 3, "je_", 3) == 0)
        return true;
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        if (strlen(fixed[i]) == len && memcmp(p, fixed[i], len) == 0)
            return true;
    return false;
}

static bool is_c_entry_point(const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < sizeof c_entry_points / sizeof c_entry_points[0]; i++) {
        size_t t = strlen(c_entry_points[i]);
        if (n >= t && strcmp(name + n - t, c_entry_points[i]) == 0 &&
            is_allocator_prefix(name, n - t))
            return true;
    }
    return false;
}

static bool starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* operator new and new[], every overload (nothrow, align_val_t), mangled
 * (_Znwm, _ZnamRKSt9nothrow_t...; j for m on 32-bit) or demangled; and
 * jemalloc's C++ front end newImpl<bool>, a static template. */
static bool is_cxx_entry_point(const char *name)
{
    static const char *const starts[] = {
        "_Znwm", "_Znam", "_Znwj", "_Znaj", "operator new", "_ZL7newImpl",
        "void* newImpl<",
    };
    for (size_t i = 0; i < sizeof starts / sizeof starts[0]; i++)
        if (starts_with(name, starts[i]))
            return true;
    return false;
}

/* "<A as core::alloc::global::GlobalAlloc>::method" for any A (the
 * user's #[global_allocator] type, std's System), the trait's provided
 * methods "core::alloc::global::GlobalAlloc::realloc", and the
 * "<impl core::alloc::global::GlobalAlloc for A>" form. */
static bool is_global_alloc_impl(const char *name)
{
    if (starts_with(name, RUST_GLOBAL_ALLOC "::") ||
        strstr(name, "<impl " RUST_GLOBAL_ALLOC " for "))
        return true;
    if (name[0] != '<')
        return false;
    /* The '>' closing the leading '<', then "::": the qualified path of
     * the function itself, not a generic argument somewhere inside it. */
    int depth = 0;
    const char *p = name;
    for (; *p; p++) {
        if (*p == '<')
            depth++;
        else if (*p == '>' && --depth == 0)
            break;
    }
    static const char as_trait[] = " as " RUST_GLOBAL_ALLOC;
    size_t t = sizeof as_trait - 1;
    return *p == '>' && p[1] == ':' && p[2] == ':' && (size_t)(p - name) >= t &&
           memcmp(p - t, as_trait, t) == 0;
}

static bool is_rust_entry_point(const char *name)
{
    const char *path = starts_with(name, "__rustc::") ? name + 9 : name;
    for (size_t i = 0; i < sizeof rust_shims / sizeof rust_shims[0]; i++)
        if (strcmp(path, rust_shims[i]) == 0)
            return true;
    /* An impl of a type of those modules is theirs too:
     * "<alloc::alloc::Global as core::alloc::Allocator>::allocate",
     * "<alloc::raw_vec::RawVec<u8>>::grow_amortized" (v0). */
    const char *module_path = name[0] == '<' ? name + 1 : name;
    for (size_t i = 0; i < sizeof rust_alloc_modules / sizeof rust_alloc_modules[0]; i++)
        if (starts_with(module_path, rust_alloc_modules[i]))
            return true;
    return is_global_alloc_impl(name);
}

bool symbol_is_allocator_name(const char *name)
{
    if (!name || !*name)
        return false;
    return is_c_entry_point(name) || is_cxx_entry_point(name) ||
           is_rust_entry_point(name);
}

/* ---- rule 1: a jemalloc copy's code inside a bigger object ---- */

/* Does name match ^(.*_)?mallctl$ ?  Returns the prefix length, or -1. */
static long mallctl_prefix_len(const char *name)
{
    static const char base[] = "mallctl";
    size_t n = strlen(name), b = sizeof base - 1;
    if (n < b || strcmp(name + n - b, base) != 0)
        return -1;
    if (n > b && name[n - b - 1] != '_')
        return -1;
    return (long)(n - b);
}

static bool is_function(const struct elf_symbol *s)
{
    return s->defined && s->type == STT_FUNC;
}

/* A copy's own function: its prefix (e.g. "_rjem_", which also starts
 * its private namespace "_rjem_je_"), or "je_", jemalloc's default private
 * namespace. */
static bool has_copy_prefix(const char *name, const char *prefix, size_t plen)
{
    return (plen && strncmp(name, prefix, plen) == 0) || starts_with(name, "je_");
}

static bool is_program_marker(const char *name)
{
    static const char *const marks[] = {
        "main", "_start", "_init", "_fini", "frame_dummy", "register_tm_clones",
        "deregister_tm_clones", "__do_global_dtors_aux", "__libc_csu_init",
    };
    for (size_t i = 0; i < sizeof marks / sizeof marks[0]; i++)
        if (strcmp(name, marks[i]) == 0)
            return true;
    return false;
}

/* A static archive is linked member by member, so the copy's code is one
 * stretch of .text.  Its exported and private functions carry the prefix;
 * its static helpers (prof_backtrace_impl, imalloc_body...) carry none but
 * sit between them.  The range is therefore the run of functions around
 * mallctl from one prefixed function to the next, as long as at most
 * MAX_UNPREFIXED_RUN unprefixed functions and no program marker (main,
 * _start...) lie between two prefixed ones. */
#define MAX_UNPREFIXED_RUN 1024

static bool copy_range(const struct elf_object *elf, size_t mallctl_index,
                       size_t plen, struct sym_range *out)
{
    const char *prefix = elf->syms[mallctl_index].name;
    uint64_t lo = elf->syms[mallctl_index].value;
    uint64_t hi = lo + elf->syms[mallctl_index].size;
    /* Downwards, then upwards, from mallctl. */
    for (int dir = -1; dir <= 1; dir += 2) {
        size_t run = 0;
        for (size_t i = mallctl_index; dir < 0 ? i-- > 0 : ++i < elf->nsyms;) {
            const struct elf_symbol *s = &elf->syms[i];
            if (!is_function(s))
                continue;
            if (has_copy_prefix(s->name, prefix, plen)) {
                run = 0;
                if (s->value < lo)
                    lo = s->value;
                if (s->value + s->size > hi)
                    hi = s->value + s->size;
            } else if (is_program_marker(s->name) || ++run > MAX_UNPREFIXED_RUN) {
                break;
            }
        }
    }
    *out = (struct sym_range){lo, hi};
    return hi > lo;
}

size_t jemalloc_code_ranges(const struct elf_object *elf, struct sym_range **out)
{
    *out = NULL;
    size_t n = 0;
    for (size_t i = 0; i < elf->nsyms; i++) {
        const struct elf_symbol *s = &elf->syms[i];
        long plen = is_function(s) ? mallctl_prefix_len(s->name) : -1;
        if (plen < 0)
            continue;
        char sibling[256];
        snprintf(sibling, sizeof sibling, "%.*smallctlnametomib", (int)plen, s->name);
        const struct elf_symbol *nametomib = elf_object_symbol_named(elf, sibling);
        if (!nametomib || !is_function(nametomib))
            continue;
        struct sym_range r;
        struct sym_range *v;
        /* mallctl is often in both .symtab and .dynsym: one range. */
        if (!copy_range(elf, i, (size_t)plen, &r) ||
            (n && r.start == (*out)[n - 1].start && r.end == (*out)[n - 1].end) ||
            !(v = realloc(*out, (n + 1) * sizeof *v)))
            continue;
        v[n++] = r;
        *out = v;
    }
    return n;
}
