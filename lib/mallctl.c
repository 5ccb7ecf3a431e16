/* mallctl.c - the mallctl names memprof knows, their types, value parsing
 * and printing, and the sentences for jemalloc's error codes. */
#include "lib/mallctl.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

const struct mallctl_info mallctl_table[] = {
    {"version", MALLCTL_STRING, MALLCTL_R, "jemalloc version string"},
    {"epoch", MALLCTL_U64, MALLCTL_RW, "write to refresh the stats.* values"},
    {"config.prof", MALLCTL_BOOL, MALLCTL_R, "built with heap profiling support"},
    {"config.stats", MALLCTL_BOOL, MALLCTL_R, "built with statistics"},
    {"config.prof_libgcc", MALLCTL_BOOL, MALLCTL_R, "profiling unwinds with libgcc"},
    {"config.prof_libunwind", MALLCTL_BOOL, MALLCTL_R, "profiling unwinds with libunwind"},
    {"config.debug", MALLCTL_BOOL, MALLCTL_R, "debug build"},
    {"opt.prof", MALLCTL_BOOL, MALLCTL_R, "profiling enabled at start (cannot change later)"},
    {"opt.prof_active", MALLCTL_BOOL, MALLCTL_R, "initial prof.active"},
    {"opt.prof_accum", MALLCTL_BOOL, MALLCTL_R, "cumulative counts kept"},
    {"opt.prof_gdump", MALLCTL_BOOL, MALLCTL_R, "dump when total virtual memory grows"},
    {"opt.prof_final", MALLCTL_BOOL, MALLCTL_R, "dump at exit"},
    {"opt.prof_leak", MALLCTL_BOOL, MALLCTL_R, "leak report at exit"},
    {"opt.prof_thread_active_init", MALLCTL_BOOL, MALLCTL_R, "initial thread.prof.active"},
    {"opt.lg_prof_sample", MALLCTL_SIZE, MALLCTL_R, "initial sample interval, log2 bytes"},
    {"opt.lg_prof_interval", MALLCTL_SSIZE, MALLCTL_R, ">= 0: the process dumps by itself every 2^N bytes"},
    {"opt.prof_prefix", MALLCTL_STRING, MALLCTL_R, "dump file name prefix"},
    {"opt.narenas", MALLCTL_UNSIGNED, MALLCTL_R, "maximum number of arenas"},
    {"opt.background_thread", MALLCTL_BOOL, MALLCTL_R, "background purging threads"},
    {"prof.active", MALLCTL_BOOL, MALLCTL_RW, "the runtime sampling switch"},
    {"prof.thread_active_init", MALLCTL_BOOL, MALLCTL_RW, "thread.prof.active of new threads"},
    {"prof.dump", MALLCTL_STRING, MALLCTL_W, "dump the profile to a file"},
    {"prof.prefix", MALLCTL_STRING, MALLCTL_W, "dump file name prefix (5.3)"},
    {"prof.gdump", MALLCTL_BOOL, MALLCTL_RW, "dump when total virtual memory grows"},
    {"prof.reset", MALLCTL_SIZE, MALLCTL_W, "reset all counters; optional new lg_sample"},
    {"prof.lg_sample", MALLCTL_SIZE, MALLCTL_R, "current sample interval, log2 bytes"},
    {"prof.interval", MALLCTL_U64, MALLCTL_R, "automatic dump interval in bytes"},
    {"thread.prof.active", MALLCTL_BOOL, MALLCTL_RW, "sampling for the calling thread"},
    {"thread.prof.name", MALLCTL_STRING, MALLCTL_RW, "name of the calling thread in dumps"},
    {"stats.allocated", MALLCTL_SIZE, MALLCTL_R, "bytes allocated by the application"},
    {"stats.active", MALLCTL_SIZE, MALLCTL_R, "bytes in active pages"},
    {"stats.metadata", MALLCTL_SIZE, MALLCTL_R, "bytes of allocator metadata"},
    {"stats.resident", MALLCTL_SIZE, MALLCTL_R, "bytes in physically resident pages"},
    {"stats.mapped", MALLCTL_SIZE, MALLCTL_R, "bytes in active extents"},
    {"stats.retained", MALLCTL_SIZE, MALLCTL_R, "bytes retained for reuse"},
    {"arenas.narenas", MALLCTL_UNSIGNED, MALLCTL_R, "number of arenas"},
    {"arena.<i>.purge", MALLCTL_VOID, MALLCTL_ACTION, "purge unused dirty pages (4096: all arenas)"},
    {"arena.<i>.decay", MALLCTL_VOID, MALLCTL_ACTION, "trigger decay-based purging (4096: all arenas)"},
    {"background_thread", MALLCTL_BOOL, MALLCTL_RW, "background purging threads enabled"},
    {"experimental.prof_recent.alloc_max", MALLCTL_SSIZE, MALLCTL_RW, "recent sampled allocations kept"},
    {NULL, 0, 0, NULL},
};

/* Does name match pattern, where "<i>" in the pattern stands for digits? */
static bool name_matches(const char *pattern, const char *name)
{
    while (*pattern) {
        if (strncmp(pattern, "<i>", 3) == 0) {
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
    [MALLCTL_SIZE] = "size_t",   [MALLCTL_SSIZE] = "ssize_t",
    [MALLCTL_U64] = "uint64_t",  [MALLCTL_STRING] = "string",
    [MALLCTL_VOID] = "void",
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
    return mp_error_set(err, "unknown type '%s': use bool, unsigned, size_t, "
                        "ssize_t, uint64_t, string or void", s);
}

size_t mallctl_type_size(enum mallctl_type t)
{
    switch (t) {
    case MALLCTL_BOOL: return sizeof(bool);
    case MALLCTL_UNSIGNED: return sizeof(unsigned);
    case MALLCTL_SIZE: return sizeof(size_t);
    case MALLCTL_SSIZE: return sizeof(ssize_t);
    case MALLCTL_U64: return sizeof(uint64_t);
    case MALLCTL_STRING: return sizeof(char *);
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
    case MALLCTL_SSIZE: {
        long long v = strtoll(text, &end, 0);
        if (errno || *end || end == text)
            return mp_error_set(err, "'%s' is not a signed integer", text);
        ssize_t s = (ssize_t)v;
        memcpy(buf, &s, sizeof s);
        return 0;
    }
    case MALLCTL_UNSIGNED:
    case MALLCTL_SIZE:
    case MALLCTL_U64: {
        if (text[0] == '-')
            return mp_error_set(err, "'%s': a %s cannot be negative", text, mallctl_type_name(t));
        unsigned long long v = strtoull(text, &end, 0);
        if (errno || *end || end == text)
            return mp_error_set(err, "'%s' is not an unsigned integer", text);
        if (t == MALLCTL_UNSIGNED) {
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
    case MALLCTL_UNSIGNED: {
        unsigned u;
        memcpy(&u, buf, sizeof u);
        snprintf(out, outlen, "%u", u);
        return;
    }
    case MALLCTL_SIZE:
    case MALLCTL_U64: {
        uint64_t u;
        memcpy(&u, buf, sizeof u);
        snprintf(out, outlen, "%" PRIu64, u);
        return;
    }
    case MALLCTL_SSIZE: {
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

double mallctl_sampling_overhead(uint64_t allocated_bytes, unsigned lg_sample)
{
    if (lg_sample >= 63)
        return 0;
    return (double)allocated_bytes * 16384.0 / (double)(UINT64_C(1) << lg_sample);
}
