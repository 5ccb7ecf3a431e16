/* procmem.c - parsers of the kernel's memory files (see lib/proc/procmem.h).  Every
 * input is bounded by len and may be cut or hostile: a parser answers
 * false (or skips a line) rather than guessing. */
#include "lib/proc/procmem.h"
#include "lib/proc/maps.h"
#include "lib/base/array.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The line starting at p (end excluded), and where the next one starts. */
static const char *line_end(const char *p, const char *end)
{
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    return nl ? nl : end;
}

/* A decimal number, skipping blanks first; false when none or too big. */
static bool number(const char **pp, const char *end, uint64_t *v)
{
    const char *p = *pp;
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    if (p == end || *p < '0' || *p > '9')
        return false;
    uint64_t n = 0;
    while (p < end && *p >= '0' && *p <= '9') {
        if (n > (UINT64_MAX - 9) / 10)
            return false;
        n = n * 10 + (uint64_t)(*p++ - '0');
    }
    *v = n;
    *pp = p;
    return true;
}

/* "Key: N kB" -> bytes, "Key: N" or "key N" -> N. */
static bool line_value(const char *p, const char *end, size_t klen, uint64_t *value)
{
    p += klen;
    if (p < end && *p == ':')
        p++;
    else if (p == end || (*p != ' ' && *p != '\t'))
        return false;
    uint64_t n;
    if (!number(&p, end, &n))
        return false;
    while (p < end && *p == ' ')
        p++;
    if (end - p >= 2 && memcmp(p, "kB", 2) == 0) {
        if (n > UINT64_MAX / 1024)
            return false;
        n *= 1024;
    }
    *value = n;
    return true;
}

bool procmem_field(const char *text, size_t len, const char *key, uint64_t *value)
{
    size_t klen = strlen(key);
    const char *end = text + len;
    for (const char *p = text; p < end;) {
        const char *e = line_end(p, end);
        if ((size_t)(e - p) > klen && memcmp(p, key, klen) == 0 &&
            line_value(p, e, klen, value))
            return true;
        p = e < end ? e + 1 : end;
    }
    return false;
}

bool procmem_stat_faults(const char *text, size_t len, uint64_t *minflt,
                         uint64_t *majflt)
{
    const char *end = text + len, *p = NULL;
    for (const char *q = text; q < end; q++)   /* the last ')' ends comm */
        if (*q == ')')
            p = q + 1;
    if (!p)
        return false;
    /* After comm: state (3), ppid..cmajflt; minflt is field 10, majflt 12. */
    for (int field = 3; field <= 12; field++) {
        while (p < end && *p == ' ')
            p++;
        if (p == end)
            return false;
        if (field == 10 || field == 12) {
            uint64_t v;
            if (!number(&p, end, &v))
                return false;
            *(field == 10 ? minflt : majflt) = v;
        }
        while (p < end && *p != ' ')
            p++;
    }
    return true;
}

bool procmem_nspid(const char *text, size_t len, uint64_t *inner, unsigned *depth)
{
    const char *end = text + len;
    for (const char *p = text; p < end;) {
        const char *e = line_end(p, end);
        if (e - p >= 7 && memcmp(p, "NStgid:", 7) == 0) {
            unsigned n = 0;
            uint64_t v = 0, last = 0;
            /* Nesting is at most 32 levels deep (MAX_PID_NS_LEVEL). */
            for (p += 7; n < 33 && number(&p, e, &v); n++)
                last = v;
            while (p < e && (*p == ' ' || *p == '\t'))
                p++;
            if (n == 0 || n > 32 || p != e || last == 0 || last > INT32_MAX)
                return false;
            *inner = last;
            *depth = n;
            return true;
        }
        p = e < end ? e + 1 : end;
    }
    return false;
}

bool procmem_cgroup_limit(const char *text, size_t len, uint64_t *v, bool *unlimited)
{
    const char *end = text + len, *p = text;
    const char *e = line_end(p, end);
    if (e - p == 3 && memcmp(p, "max", 3) == 0) {
        *unlimited = true;
        *v = 0;
        return true;
    }
    uint64_t n;
    if (!number(&p, e, &n) || p != e)
        return false;
    *unlimited = n >= PROCMEM_LIMIT_NONE;
    *v = n;
    return true;
}

/* "key=N.NN" at *pp: the number as a double (PSI's percentages). */
static bool psi_avg(const char **pp, const char *end, const char *key, double *out)
{
    size_t klen = strlen(key);
    const char *p = *pp;
    while (p < end && *p == ' ')
        p++;
    if ((size_t)(end - p) <= klen || memcmp(p, key, klen) != 0 || p[klen] != '=')
        return false;
    p += klen + 1;
    uint64_t whole, frac = 0, scale = 1;
    if (!number(&p, end, &whole) || whole > 100000)
        return false;
    if (p < end && *p == '.') {
        p++;
        for (int digits = 0; p < end && *p >= '0' && *p <= '9'; p++, digits++)
            if (digits < 6) {
                frac = frac * 10 + (uint64_t)(*p - '0');
                scale *= 10;
            }
    }
    *out = (double)whole + (double)frac / (double)scale;
    *pp = p;
    return true;
}

bool procmem_psi_line(const char *text, size_t len, const char *which, struct procmem_psi *out)
{
    size_t wlen = strlen(which);
    const char *end = text + len;
    for (const char *p = text; p < end;) {
        const char *e = line_end(p, end);
        const char *q = p + wlen;
        struct procmem_psi v;
        if ((size_t)(e - p) > wlen && memcmp(p, which, wlen) == 0 && *q == ' ' &&
            psi_avg(&q, e, "avg10", &v.avg10) && psi_avg(&q, e, "avg60", &v.avg60) &&
            psi_avg(&q, e, "avg300", &v.avg300)) {
            while (q < e && *q == ' ')
                q++;
            if (e - q > 6 && memcmp(q, "total=", 6) == 0) {
                q += 6;
                if (number(&q, e, &v.total_us)) {
                    *out = v;
                    return true;
                }
            }
        }
        p = e < end ? e + 1 : end;
    }
    return false;
}

/* ---- smaps, grouped ---- */

static struct procmem_group *group_for(struct procmem_groups *g, enum procmem_kind kind,
                                       const char *name)
{
    for (size_t i = 0; i < g->n; i++)
        if (g->v[i].kind == kind && strcmp(g->v[i].name, name) == 0)
            return &g->v[i];
    if (array_reserve(&g->v, &g->cap, g->n + 1, sizeof *g->v, 32) < 0)
        return NULL;
    struct procmem_group *n = &g->v[g->n++];
    memset(n, 0, sizeof *n);
    n->kind = kind;
    snprintf(n->name, sizeof n->name, "%s", name);
    return n;
}

static bool is_anon(const struct map_entry *e)
{
    return e->path[0] == 0 && e->inode == 0;
}

/* Which group a mapping belongs to; prev is the mapping before it (or
 * NULL), for the guard-page rule of pthread stacks. */
static enum procmem_kind classify(const struct map_entry *e, const struct map_entry *prev,
                                  const char **name)
{
    if (strcmp(e->path, "[stack]") == 0 ||
        (is_anon(e) && e->r && e->w && !e->shared && prev && is_anon(prev) &&
         !prev->r && !prev->w && !prev->x && prev->end == e->start)) {
        *name = "stacks";
        return PROCMEM_STACK;
    }
    if (is_anon(e) && e->r && e->w && !e->shared) {
        *name = "anonymous";
        return PROCMEM_ANON;
    }
    if (map_entry_is_file(e)) {
        *name = e->path;
        return PROCMEM_FILE;
    }
    *name = e->path[0] ? e->path : is_anon(e) && !e->r && !e->w ? "guards" : "other";
    return PROCMEM_OTHER;
}

int procmem_smaps_groups(const char *text, size_t len, struct procmem_groups *out)
{
    memset(out, 0, sizeof *out);
    const char *end = text + len;
    struct map_entry prev = {0}, cur = {0};
    bool have_prev = false;
    struct procmem_group *g = NULL;
    for (const char *p = text; p < end;) {
        const char *e = line_end(p, end);
        struct mp_error err;
        struct map_entry m;
        uint64_t v;
        /* Field lines ("Rss:", "AnonHugePages:") never parse as a maps line. */
        if (maps_parse_line(p, (size_t)(e - p), &m, &err) == 0) {
            free(prev.path);
            prev = cur;
            cur = m;
            const char *name;
            enum procmem_kind kind = classify(&cur, have_prev ? &prev : NULL, &name);
            have_prev = true;
            if (!(g = group_for(out, kind, name))) {
                free(prev.path);
                free(cur.path);
                procmem_groups_free(out);
                return -1;
            }
            g->mappings++;
            g->size += cur.end - cur.start;
        } else if (g && (size_t)(e - p) > 4) {
            if (memcmp(p, "Rss:", 4) == 0 && line_value(p, e, 3, &v))
                g->rss += v;
            else if (memcmp(p, "Swap:", 5) == 0 && line_value(p, e, 4, &v))
                g->swap += v;
            else if (((e - p > 13 && memcmp(p, "Private_Dirty:", 14) == 0 &&
                       line_value(p, e, 13, &v)) ||
                      (e - p > 12 && memcmp(p, "Shared_Dirty:", 13) == 0 &&
                       line_value(p, e, 12, &v))))
                g->dirty += v;
        }
        p = e < end ? e + 1 : end;
    }
    free(prev.path);
    free(cur.path);
    return 0;
}

void procmem_groups_free(struct procmem_groups *g)
{
    free(g->v);
    memset(g, 0, sizeof *g);
}
