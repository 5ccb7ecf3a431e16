/* mallctl.c - looking names up in the generated table (allocator/jemalloc/mallctl_names.c),
 * what memprof knows beyond the page (which calls change the process, which
 * writes may carry no value), the check of every call's shape before it is
 * made, value parsing and printing, and the sentences for jemalloc's error
 * codes. */
#include "allocator/jemalloc/mallctl.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

static bool is_index_pattern(const char *p)
{
    return strncmp(p, "<i>", 3) == 0 || strncmp(p, "<j>", 3) == 0;
}

/* Does name match pattern, where "<i>"/"<j>" in the pattern stand for digits? */
static bool name_matches(const char *pattern, const char *name)
{
    while (*pattern) {
        if (is_index_pattern(pattern)) {
            if (!isdigit((unsigned char)*name))
                return false;
            while (isdigit((unsigned char)*name))
                name++;
            pattern += 3;
        } else if (*pattern++ != *name++) {
            return false;
        }
    }
    return *name == '\0';
}

const struct mallctl_info *mallctl_lookup(const char *name)
{
    for (const struct mallctl_info *m = mallctl_table; m->name; m++)
        if (name_matches(m->name, name))
            return m;
    return NULL;
}

static const char *const type_names[] = {
    [MALLCTL_BOOL] = "bool",     [MALLCTL_UNSIGNED] = "unsigned",
    [MALLCTL_U32] = "uint32_t",  [MALLCTL_SIZE] = "size_t",
    [MALLCTL_SSIZE] = "ssize_t", [MALLCTL_U64] = "uint64_t",
    [MALLCTL_I64] = "int64_t",   [MALLCTL_STRING] = "string",
    [MALLCTL_POINTER] = "pointer", [MALLCTL_VOID] = "void",
};

const char *mallctl_type_name(enum mallctl_type t)
{
    return t <= MALLCTL_VOID ? type_names[t] : "?";
}

int mallctl_type_parse(const char *s, enum mallctl_type *t, struct mp_error *err)
{
    for (size_t i = 0; i < sizeof type_names / sizeof *type_names; i++)
        if (strcmp(s, type_names[i]) == 0) {
            *t = (enum mallctl_type)i;
            return 0;
        }
    return mp_error_set(err, "unknown type '%s': use bool, unsigned, uint32_t, "
                        "size_t, ssize_t, uint64_t, int64_t, string, pointer or void", s);
}

size_t mallctl_type_size(enum mallctl_type t)
{
    switch (t) {
    case MALLCTL_BOOL: return sizeof(bool);
    case MALLCTL_UNSIGNED: return sizeof(unsigned);
    case MALLCTL_U32: return sizeof(uint32_t);
    case MALLCTL_SIZE: return sizeof(size_t);
    case MALLCTL_SSIZE: return sizeof(ssize_t);
    case MALLCTL_U64: return sizeof(uint64_t);
    case MALLCTL_I64: return sizeof(int64_t);
    case MALLCTL_STRING: return sizeof(char *);
    case MALLCTL_POINTER: return sizeof(void *);
    case MALLCTL_VOID: return 0;
    }
    return 0;
}

static int parse_bool(const char *text, bool *out)
{
    static const char *const yes[] = {"true", "1", "on", "yes"};
    static const char *const no[] = {"false", "0", "off", "no"};
    for (int i = 0; i < 4; i++) {
        if (strcasecmp(text, yes[i]) == 0) { *out = true; return 0; }
        if (strcasecmp(text, no[i]) == 0) { *out = false; return 0; }
    }
    return -1;
}

int mallctl_value_parse(enum mallctl_type t, const char *text, void *buf,
                        size_t *len, struct mp_error *err)
{
    char *end;
    errno = 0;
    *len = mallctl_type_size(t);
    switch (t) {
    case MALLCTL_BOOL: {
        bool b;
        if (parse_bool(text, &b))
            return mp_error_set(err, "'%s' is not a boolean: use true/false, on/off or 1/0", text);
        memcpy(buf, &b, sizeof b);
        return 0;
    }
    case MALLCTL_SSIZE:
    case MALLCTL_I64: {
        long long v = strtoll(text, &end, 0);
        if (errno || *end || end == text)
            return mp_error_set(err, "'%s' is not a signed integer", text);
        ssize_t s = (ssize_t)v;
        memcpy(buf, &s, sizeof s);
        return 0;
    }
    case MALLCTL_UNSIGNED:
    case MALLCTL_U32:
    case MALLCTL_SIZE:
    case MALLCTL_U64: {
        if (text[0] == '-')
            return mp_error_set(err, "'%s': a %s cannot be negative", text, mallctl_type_name(t));
        unsigned long long v = strtoull(text, &end, 0);
        if (errno || *end || end == text)
            return mp_error_set(err, "'%s' is not an unsigned integer", text);
        if (t == MALLCTL_UNSIGNED || t == MALLCTL_U32) {
            if (v > UINT32_MAX)
                return mp_error_set(err, "'%s' is too large for an unsigned", text);
            unsigned u = (unsigned)v;
            memcpy(buf, &u, sizeof u);
        } else {
            uint64_t u = v;
            memcpy(buf, &u, sizeof u);
        }
        return 0;
    }
    case MALLCTL_POINTER:
        return mp_error_set(err, "'%s': memprof does not write addresses into "
                            "jemalloc (a wrong one would crash the process)", text);
    case MALLCTL_STRING:
    case MALLCTL_VOID:
        break;
    }
    return mp_error_set(err, "a %s value cannot be parsed here", mallctl_type_name(t));
}

void mallctl_value_format(enum mallctl_type t, const void *buf, char *out, size_t outlen)
{
    switch (t) {
    case MALLCTL_BOOL: {
        bool b;
        memcpy(&b, buf, sizeof b);
        snprintf(out, outlen, "%s", b ? "true" : "false");
        return;
    }
    case MALLCTL_UNSIGNED:
    case MALLCTL_U32: {
        uint32_t u;
        memcpy(&u, buf, sizeof u);
        snprintf(out, outlen, "%" PRIu32, u);
        return;
    }
    case MALLCTL_POINTER: {
        uint64_t u;
        memcpy(&u, buf, sizeof u);
        snprintf(out, outlen, "0x%" PRIx64, u);
        return;
    }
    case MALLCTL_SIZE:
    case MALLCTL_U64: {
        uint64_t u;
        memcpy(&u, buf, sizeof u);
        snprintf(out, outlen, "%" PRIu64, u);
        return;
    }
    case MALLCTL_SSIZE:
    case MALLCTL_I64: {
        int64_t v;
        memcpy(&v, buf, sizeof v);
        snprintf(out, outlen, "%" PRId64, v);
        return;
    }
    case MALLCTL_STRING:
    case MALLCTL_VOID:
        break;
    }
    snprintf(out, outlen, "(%s)", mallctl_type_name(t));
}

const char *mallctl_access_name(enum mallctl_access a)
{
    switch (a) {
    case MALLCTL_R: return "r-";
    case MALLCTL_W: return "-w";
    case MALLCTL_RW: return "rw";
    case MALLCTL_R_OR_W: return "r- or -w";
    case MALLCTL_ACTION: return "--";
    }
    return "?";
}

bool mallctl_write_optional(const char *name)
{
    return strcmp(name, "prof.dump") == 0 || strcmp(name, "prof.reset") == 0;
}

/* What the page says in prose only: calls that change the process beyond
 * what their access suggests. */
static const struct {
    const char *pattern;
    const char *what;
    bool needs_force;
} side_effects[] = {
    {"arena.<i>.reset", "discards every allocation in the arena at once: memory "
     "the program still uses is freed under it (meant only for arenas the "
     "program created and no longer uses)", true},
    {"arena.<i>.destroy", "discards every allocation in the arena and destroys "
     "it: memory the program still uses is freed under it (meant only for "
     "arenas the program created and no longer uses)", true},
    {"arenas.create", "creates a new arena each time it is read; jemalloc "
     "never frees an arena", true},
    {"tcache.create", "creates an explicit thread cache each time it is read; "
     "it stays until tcache.destroy", true},
};

const char *mallctl_side_effect(const char *name, bool *needs_force)
{
    for (size_t i = 0; i < sizeof side_effects / sizeof *side_effects; i++)
        if (name_matches(side_effects[i].pattern, name)) {
            *needs_force = side_effects[i].needs_force;
            return side_effects[i].what;
        }
    *needs_force = false;
    return NULL;
}

/* Longest string memprof writes: a path (PATH_MAX) is the longest jemalloc
 * takes (prof.dump, prof.prefix). */
#define MALLCTL_STRING_MAX 4095

/* The indices of name at the pattern's "<i>"/"<j>": decimal numbers that fit
 * an unsigned; an arena index is below MALLCTL_ARENAS_ALL or that value (or,
 * for statistics, MALLCTL_ARENAS_DESTROYED). */
static int check_indices(const char *pattern, const char *name, struct mp_error *err)
{
    bool stats = strncmp(pattern, "stats.arenas.<i>", 16) == 0;
    bool arena = stats || strncmp(pattern, "arena.<i>", 9) == 0;
    const char *p = pattern, *n = name;
    while (*p) {
        if (!is_index_pattern(p)) {
            p++, n++;
            continue;
        }
        const char *start = n;
        while (isdigit((unsigned char)*n))
            n++;
        unsigned long long v = n - start <= 10 ? strtoull(start, NULL, 10) : ~0ULL;
        unsigned limit = stats ? MALLCTL_ARENAS_DESTROYED : MALLCTL_ARENAS_ALL;
        if (arena && p == pattern + (stats ? 13 : 6) && v > limit)
            return mp_error_set(err, "%s: arena index %.*s is out of range: give one "
                                "from 0 to arenas.narenas - 1, or %u (MALLCTL_ARENAS_ALL) "
                                "for every arena%s", name, (int)(n - start), start,
                                MALLCTL_ARENAS_ALL, stats ? ", or 4097 for the "
                                "destroyed ones" : "");
        if (v > UINT32_MAX)
            return mp_error_set(err, "%s: index %.*s is too large", name,
                                (int)(n - start), start);
        p += 3;
    }
    return 0;
}

static bool printable_name(const char *s)
{
    for (; *s; s++)
        if (!isgraph((unsigned char)*s) && !isblank((unsigned char)*s))
            return false;
    return true;
}

int mallctl_check_call(const char *name, const struct mallctl_info *info,
                       const struct mallctl_shape *sh, struct mp_error *err)
{
    if (!info)
        return mp_error_set(err, "%s: memprof does not know this name's type: give "
                            "it with --type (see 'help mallctl')", name);
    if (strchr(info->name, '<') && check_indices(info->name, name, err))
        return -1;
    switch (info->access) {
    case MALLCTL_ACTION:
        if (sh->read || sh->write)
            return mp_error_set(err, "%s is an action: it takes no value and returns "
                                "none (run it as 'mallctl %s')", name, name);
        return 0;
    case MALLCTL_R:
        if (sh->write)
            return mp_error_set(err, "%s is read-only%s", name,
                                strncmp(name, "opt.", 4) == 0
                                    ? ": opt.* values are fixed when the process starts"
                                    : "");
        break;
    case MALLCTL_W:
        if (sh->read)
            return mp_error_set(err, "%s is write-only: jemalloc has nothing to read "
                                "there; write it with 'mallctl %s VALUE' (a %s)", name,
                                name, mallctl_type_name(info->write_type));
        break;
    case MALLCTL_R_OR_W:
        if (sh->read && sh->write)
            return mp_error_set(err, "%s is read or written, never both in one call "
                                "(jemalloc(3))", name);
        break;
    case MALLCTL_RW:
        break;
    }
    if (!sh->read && !sh->write && !(info->access == MALLCTL_W && mallctl_write_optional(name)))
        return mp_error_set(err, "%s needs a value (a %s): a call without one would "
                            "hand jemalloc a NULL where it expects the value", name,
                            mallctl_type_name(info->write_type));
    size_t rsize = mallctl_type_size(info->type), wsize = mallctl_type_size(info->write_type);
    if (sh->read && sh->oldlen != rsize)
        return mp_error_set(err, "%s is a %s (%zu bytes); a read of %zu bytes is refused",
                            name, mallctl_type_name(info->type), rsize, sh->oldlen);
    if (!sh->write)
        return 0;
    if (info->write_type == MALLCTL_POINTER)
        return mp_error_set(err, "%s takes an address: memprof does not write addresses "
                            "into jemalloc (a wrong one would crash the process)", name);
    if (sh->newlen != wsize)
        return mp_error_set(err, "%s is a %s (%zu bytes); a write of %zu bytes is refused",
                            name, mallctl_type_name(info->write_type), wsize, sh->newlen);
    if (info->write_type != MALLCTL_STRING)
        return 0;
    if (!sh->string)
        return mp_error_set(err, "%s needs a string", name);
    if (strlen(sh->string) > MALLCTL_STRING_MAX)
        return mp_error_set(err, "%s: a string of %zu bytes is too long (at most %d)",
                            name, strlen(sh->string), MALLCTL_STRING_MAX);
    if (strcmp(name, "thread.prof.name") == 0 && !printable_name(sh->string))
        return mp_error_set(err, "thread.prof.name takes printable characters and "
                            "blanks only (jemalloc(3))");
    return 0;
}

void mallctl_conf_var(const char *prefix, char *buf, size_t buflen)
{
    char up[64];
    size_t i;
    for (i = 0; prefix[i] && i < sizeof up - 1; i++)
        up[i] = (char)toupper((unsigned char)prefix[i]);
    up[i] = '\0';
    snprintf(buf, buflen, "%sMALLOC_CONF", up);
}

static bool is_prof_name(const char *name)
{
    return strncmp(name, "prof.", 5) == 0 || strncmp(name, "thread.prof.", 12) == 0;
}

void mallctl_explain(const char *name, int ret, bool writing,
                     const char *conf_var, struct mp_error *err)
{
    switch (ret) {
    case ENOENT:
        if (is_prof_name(name)) {
            mp_error_set(err, "%s: heap profiling is not enabled in this process. "
                         "jemalloc reads opt.prof only at start-up, so it cannot be "
                         "turned on now: restart the process with "
                         "%s=prof:true,prof_active:false (this costs nothing "
                         "until you run 'prof on')", name, conf_var);
            return;
        }
        mp_error_set(err, "%s: this jemalloc has no such control (the name is "
                     "wrong, or this version or build lacks it; 'mallctl' lists "
                     "the names memprof knows)", name);
        return;
    case EPERM:
        mp_error_set(err, "%s is read-only%s", name,
                     strncmp(name, "opt.", 4) == 0
                         ? ": opt.* values are fixed when the process starts"
                         : "");
        return;
    case EINVAL:
        mp_error_set(err, "%s: jemalloc rejected the %s (wrong type or size, or "
                     "a value out of range)", name, writing ? "value" : "request");
        return;
    case EFAULT:
        if (strcmp(name, "prof.dump") == 0) {
            mp_error_set(err, "prof.dump: the process could not create or write "
                         "the dump file (is its filesystem full or read-only?)");
            return;
        }
        mp_error_set(err, "%s: jemalloc reported a fault (EFAULT)", name);
        return;
    case EAGAIN:
        mp_error_set(err, "%s: jemalloc is busy (EAGAIN); try again", name);
        return;
    case ENOMEM:
        mp_error_set(err, "%s: the process is out of memory (ENOMEM)", name);
        return;
    default:
        mp_error_set(err, "%s: mallctl failed with %s (%d)", name, strerror(ret), ret);
    }
}

void mallctl_explain_no_profiling(bool config_prof, const char *conf_var,
                                  struct mp_error *err)
{
    if (!config_prof) {
        mp_error_set(err, "this jemalloc was built without profiling support "
                     "(config.prof is false): no setting can turn profiling on; "
                     "the program must be rebuilt with a jemalloc configured "
                     "--enable-prof (for tikv-jemallocator / jemalloc-sys in Rust: "
                     "the `profiling` feature)");
        return;
    }
    mp_error_set(err, "heap profiling is not enabled in this process (opt.prof "
                 "is false). jemalloc reads opt.prof only at start-up, so it "
                 "cannot be turned on now: restart the process with "
                 "%s=prof:true,prof_active:false (this costs nothing until you "
                 "run 'prof on')", conf_var);
}

bool mallctl_failure_is_no_profiling(const char *name, int ret, bool config_prof,
                                     bool opt_prof)
{
    if (!is_prof_name(name) || (config_prof && opt_prof))
        return false;
    return ret == ENOENT || (ret == EFAULT && strcmp(name, "prof.dump") == 0);
}

/* What a sampled small allocation occupies while it lives. */
#define SAMPLED_SMALL_SIZE 16384.0

void mallctl_sampling_cost(uint64_t small_bytes, uint64_t small_count, unsigned lg_sample,
                           struct mallctl_sampling_cost *cost)
{
    double rate = lg_sample >= 63 ? 0x1p63 : (double)(UINT64_C(1) << lg_sample);
    *cost = (struct mallctl_sampling_cost){.extra_bytes = -1, .ratio = -1,
                                           .every_allocation = lg_sample == 0};
    if (small_count == 0) {
        /* without a count only the formula is left, and at rate 0 it
         * says nothing true */
        if (!cost->every_allocation) {
            cost->ratio = SAMPLED_SMALL_SIZE / rate;
            cost->extra_bytes = (double)small_bytes * cost->ratio;
        }
        return;
    }
    double average = (double)small_bytes / (double)small_count;
    cost->every_allocation = cost->every_allocation || rate <= average;
    cost->extra_bytes = (double)small_count * SAMPLED_SMALL_SIZE * -expm1(-average / rate);
    cost->ratio = small_bytes ? cost->extra_bytes / (double)small_bytes : 0;
}
