/* version.c - jemalloc's version string parsed (bounded: it comes from the
 * target), and the behaviours memprof must treat by version, each checked
 * in jemalloc's own source at the tags named. */
#include "allocator/jemalloc/version.h"

#include <stdio.h>
#include <string.h>

/* A decimal number of at most 9 digits at text[*i], below len. */
static bool number(const char *text, size_t len, size_t *i, unsigned long *out)
{
    size_t start = *i;
    unsigned long n = 0;
    while (*i < len && text[*i] >= '0' && text[*i] <= '9' && *i - start < 9)
        n = n * 10 + (unsigned long)(text[(*i)++] - '0');
    if (*i == start || (*i < len && text[*i] >= '0' && text[*i] <= '9'))
        return false;
    *out = n;
    return true;
}

static bool at(const char *text, size_t len, size_t i, char c)
{
    return i < len && text[i] == c;
}

bool jemalloc_version_parse(const char *text, size_t len, struct jemalloc_version *v)
{
    *v = (struct jemalloc_version){0};
    if (!text)
        return false;
    size_t end = strnlen(text, len), i = 0;
    unsigned long part[3];
    for (int k = 0; k < 3; k++) {
        if (k && !at(text, end, i++, '.'))
            return false;
        if (!number(text, end, &i, &part[k]))
            return false;
    }
    unsigned long commits = 0;
    if (at(text, end, i, '-')) {        /* "-N-gCOMMIT", N only is enough */
        i++;
        if (!number(text, end, &i, &commits))
            return false;
    } else if (i != end)
        return false;
    if (part[0] == 0 && part[1] == 0 && part[2] == 0)
        return false;                   /* built outside git: no version */
    *v = (struct jemalloc_version){
        .known = true, .major = (unsigned)part[0], .minor = (unsigned)part[1],
        .patch = (unsigned)part[2], .commits = commits,
    };
    return true;
}

void jemalloc_version_text(const struct jemalloc_version *v, char *buf, size_t len)
{
    if (!v->known)
        snprintf(buf, len, "of unknown version");
    else if (v->commits)
        snprintf(buf, len, "%u.%u.%u-%lu", v->major, v->minor, v->patch, v->commits);
    else
        snprintf(buf, len, "%u.%u.%u", v->major, v->minor, v->patch);
}

int jemalloc_version_cmp(const struct jemalloc_version *v, unsigned major, unsigned minor,
                         unsigned patch, unsigned long commits)
{
    unsigned long a[4] = {v->major, v->minor, v->patch, v->commits};
    unsigned long b[4] = {major, minor, patch, commits};
    for (int k = 0; k < 4; k++)
        if (a[k] != b[k])
            return a[k] < b[k] ? -1 : 1;
    return 0;
}

/* 5.2.1's src/jemalloc.c, je_malloc, lines 2351-2364: on the fast path,
 * "if (!prof_active) tsd_bytes_until_sample_set(tsd, SSIZE_MAX)", whose
 * comment promises a reset when prof_active is set, which prof_active_set
 * (src/prof.c, line 2410) does not do.  Brought by "malloc: Add a fastpath"
 * (5.1.0-89-g0f831365), fixed by "Bug fix for prof_active switch"
 * (5.2.1-21-g9e031c1d): 5.3.0 is right. */
bool jemalloc_inactive_threads_stop_sampling(const struct jemalloc_version *v)
{
    return v->known && jemalloc_version_cmp(v, 5, 1, 0, 89) >= 0 &&
           jemalloc_version_cmp(v, 5, 2, 1, 21) < 0;
}

/* 5.2.1's src/jemalloc.c, je_malloc: the counter is lowered (line 2352)
 * before cache_bin_alloc_easy (line 2371); on a miss, malloc_default
 * (line 2388) reaches prof_alloc_prep with update=true, which lowers it
 * again (include/jemalloc/internal/prof_inlines_b.h, line 88).  The same
 * fast path, the same fix. */
bool jemalloc_small_sizes_read_high(const struct jemalloc_version *v)
{
    return jemalloc_inactive_threads_stop_sampling(v);
}

const char jemalloc_inactive_threads_text[] =
    "a thread that allocated while prof.active was false never samples again "
    "(its malloc fast path set its sampling counter to SSIZE_MAX, and turning "
    "prof.active on does not reset it; fixed in jemalloc 5.3.0)";

/* "Last-N profiling mode" (5.2.1-160-g9a60cf54), released in 5.3.0. */
bool jemalloc_has_prof_recent(const struct jemalloc_version *v)
{
    return v->known && jemalloc_version_cmp(v, 5, 2, 1, 160) >= 0;
}

/* "Rename prof.dump_prefix to prof.prefix" (5.2.1-769-g5884a076), 5.3.0. */
bool jemalloc_has_prof_prefix(const struct jemalloc_version *v)
{
    return v->known && jemalloc_version_cmp(v, 5, 2, 1, 769) >= 0;
}
