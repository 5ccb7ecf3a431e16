/* jemalloc_summary.c - jemalloc's whole-process figures in one stop
 * (jemalloc_summary.h). */
#include "session/jemalloc_summary.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allocator/jemalloc/mallctl.h"
#include "session/control.h"
#include "session/say.h"

#define MAX_EXTRA 8

const char *const jemalloc_summary_names[JEMALLOC_SUMMARY_NFIG] = {
    "stats.allocated", "stats.active", "stats.metadata", "stats.resident",
    "stats.mapped", "stats.retained",
};

/* The per-arena reads, after the summary's: pdirty and pmuzzy, then with
 * detail the rest (ARENA_DETAIL of them in all).  Each value lands in an
 * 8-byte slot zeroed first (nthreads, an unsigned, fills its low half:
 * little-endian). */
enum { ARENA_PAGES = 2, ARENA_DETAIL = 9, NAME_ROOM = 48 };
static const char *const arena_figures[ARENA_DETAIL] = {
    "pdirty", "pmuzzy", "nthreads", "pactive", "small.allocated", "large.allocated",
    "base", "internal", "resident",
};

struct arena_calls {
    size_t per;                /* calls per arena */
    unsigned planned;          /* arenas read: 0 to planned - 1 */
    char names[JEMALLOC_SUMMARY_MAX_ARENAS][ARENA_DETAIL][NAME_ROOM];
    uint64_t val[JEMALLOC_SUMMARY_MAX_ARENAS][ARENA_DETAIL];
};

static size_t plan_arenas(struct arena_calls *ac, struct mallctl_call *calls)
{
    size_t n = 0;
    for (unsigned i = 0; i < ac->planned; i++)
        for (size_t k = 0; k < ac->per; k++) {
            snprintf(ac->names[i][k], NAME_ROOM, "stats.arenas.%u.%s", i, arena_figures[k]);
            ac->val[i][k] = 0;
            calls[n++] = (struct mallctl_call){
                .name = ac->names[i][k], .old = &ac->val[i][k],
                .oldlen = k == 2 ? sizeof(unsigned) : sizeof(uint64_t)};
        }
    return n;
}

static bool all_answered(const struct mallctl_call *c, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (c[k].ret)
            return false;
    return true;
}

/* One arena's figures, in bytes. */
static struct jemalloc_arena_pages arena_take(const struct arena_calls *ac, unsigned i,
                                              const struct mallctl_call *c, uint64_t page)
{
    const uint64_t *v = ac->val[i];
    struct jemalloc_arena_pages a = {.index = i, .dirty = v[0] * page, .muzzy = v[1] * page};
    if (ac->per == ARENA_DETAIL && all_answered(c, ARENA_DETAIL)) {
        a.detail = true;
        a.threads = (unsigned)v[2];
        a.active = v[3] * page;
        a.allocated = v[4] + v[5];
        a.metadata = v[6] + v[7];
        a.resident = v[8];
    }
    return a;
}

/* The arenas that answered (one not yet initialized is ENOENT), in
 * bytes.  Only those below narenas: jemalloc still answers index narenas
 * with the merged figures of all (a compatibility it keeps until 6.0). */
static void take_arenas(const struct arena_calls *ac, const struct mallctl_call *calls,
                        uint64_t page, unsigned narenas, struct jemalloc_arenas *arenas)
{
    arenas->n = 0;
    for (unsigned i = 0; i < ac->planned && i < narenas; i++) {
        const struct mallctl_call *c = calls + (size_t)i * ac->per;
        if (c[0].ret || c[1].ret)
            continue;
        arenas->a[arenas->n++] = arena_take(ac, i, c, page);
    }
}

static int summary_read(struct session *s, struct mallctl_call *extra, size_t nextra,
                        struct jemalloc_summary *f, struct jemalloc_arenas *arenas, bool detail);

int jemalloc_summary_read(struct session *s, struct mallctl_call *extra, size_t nextra,
                          struct jemalloc_summary *f)
{
    return jemalloc_summary_read_arenas(s, extra, nextra, f, NULL);
}

int jemalloc_summary_read_arenas(struct session *s, struct mallctl_call *extra, size_t nextra,
                                 struct jemalloc_summary *f, struct jemalloc_arenas *arenas)
{
    return summary_read(s, extra, nextra, f, arenas, false);
}

int jemalloc_summary_read_detail(struct session *s, struct mallctl_call *extra, size_t nextra,
                                 struct jemalloc_summary *f, struct jemalloc_arenas *arenas)
{
    return summary_read(s, extra, nextra, f, arenas, true);
}

enum { NFIG = JEMALLOC_SUMMARY_NFIG,
       NCALLS = MAX_EXTRA + NFIG + 5 + ARENA_DETAIL * JEMALLOC_SUMMARY_MAX_ARENAS };

/* The calls and the per-arena slots: too large for a serving thread's
 * stack, so on the heap. */
struct summary_calls {
    struct mallctl_call calls[NCALLS];
    struct arena_calls ac;
};

static int summary_run(struct session *s, struct summary_calls *sc, struct mallctl_call *extra,
                       size_t nextra, struct jemalloc_summary *f, struct jemalloc_arenas *arenas);

/* The arenas a detailed read plans: arenas.narenas (fixed at start but
 * for arenas.create), read in a stop of its own, so that a process with
 * 4 arenas is not stopped for 64 arenas' calls (each call some us). */
static int arenas_limit(struct session *s, unsigned *planned)
{
    unsigned narenas = 0;
    struct mallctl_call c = {.name = "arenas.narenas", .old = &narenas,
                             .oldlen = sizeof narenas};
    if (control_run_calls(s, &c, 1))
        return -1;
    if (c.ret)
        return control_mallctl_failed(s, "arenas.narenas", c.ret, false);
    /* one more: an arena arenas.create made between the two stops */
    if (narenas < JEMALLOC_SUMMARY_MAX_ARENAS)
        *planned = narenas + 1;
    return 0;
}

static int summary_read(struct session *s, struct mallctl_call *extra, size_t nextra,
                        struct jemalloc_summary *f, struct jemalloc_arenas *arenas, bool detail)
{
    struct summary_calls *sc = calloc(1, sizeof *sc);
    if (!sc) {
        memset(f, 0, sizeof *f);
        say_error("out of memory reading jemalloc's statistics");
        return -1;
    }
    sc->ac.per = detail ? ARENA_DETAIL : ARENA_PAGES;
    sc->ac.planned = JEMALLOC_SUMMARY_MAX_ARENAS;
    int rc = detail ? arenas_limit(s, &sc->ac.planned) : 0;
    if (rc == 0)
        rc = summary_run(s, sc, extra, nextra, f, arenas);
    free(sc);
    return rc;
}

static int summary_run(struct session *s, struct summary_calls *sc, struct mallctl_call *extra,
                       size_t nextra, struct jemalloc_summary *f, struct jemalloc_arenas *arenas)
{
    const char *const *names = jemalloc_summary_names;
    struct mallctl_call *calls = sc->calls;
    struct arena_calls *ac = &sc->ac;
    uint64_t one = 1, page = 0, pdirty = 0, pmuzzy = 0;
    char dirty_name[40], muzzy_name[40];
    size_t n = 0;
    memset(f, 0, sizeof *f);
    if (nextra > MAX_EXTRA)
        nextra = MAX_EXTRA;
    for (size_t i = 0; i < nextra; i++)
        calls[n++] = extra[i];
    size_t first = n;
    calls[n++] = (struct mallctl_call){.name = "epoch", .new = &one, .newlen = sizeof one};
    uint64_t *dst[NFIG] = {&f->allocated, &f->active, &f->metadata, &f->resident,
                           &f->mapped, &f->retained};
    for (size_t i = 0; i < NFIG; i++)
        calls[n++] = (struct mallctl_call){.name = names[i], .old = dst[i],
                                           .oldlen = sizeof(size_t)};
    snprintf(dirty_name, sizeof dirty_name, "stats.arenas.%u.pdirty", MALLCTL_ARENAS_ALL);
    snprintf(muzzy_name, sizeof muzzy_name, "stats.arenas.%u.pmuzzy", MALLCTL_ARENAS_ALL);
    size_t pages = n;
    calls[n++] = (struct mallctl_call){.name = "arenas.page", .old = &page, .oldlen = sizeof page};
    calls[n++] = (struct mallctl_call){.name = dirty_name, .old = &pdirty, .oldlen = sizeof pdirty};
    calls[n++] = (struct mallctl_call){.name = muzzy_name, .old = &pmuzzy, .oldlen = sizeof pmuzzy};
    size_t narenas = n;
    calls[n++] = (struct mallctl_call){.name = "arenas.narenas", .old = &f->narenas,
                                       .oldlen = sizeof f->narenas};
    size_t per_arena = n;
    if (arenas)
        n += plan_arenas(ac, calls + n);
    if (control_run_calls(s, calls, n))
        return -1;
    for (size_t i = 0; i < nextra; i++)
        extra[i] = calls[i];
    if (calls[narenas].ret)
        return control_mallctl_failed(s, "arenas.narenas", calls[narenas].ret, false);
    f->stats = calls[first].ret == 0 && calls[first + 1].ret == 0;
    f->pages = f->stats && !calls[pages].ret && !calls[pages + 1].ret && !calls[pages + 2].ret;
    f->dirty = f->pages ? pdirty * page : 0;
    f->muzzy = f->pages ? pmuzzy * page : 0;
    if (arenas && f->pages)
        take_arenas(ac, calls + per_arena, page, f->narenas, arenas);
    else if (arenas)
        arenas->n = 0;
    return 0;
}
