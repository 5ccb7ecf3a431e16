/* jemalloc_summary.c - jemalloc's whole-process figures in one stop
 * (jemalloc_summary.h). */
#include "session/jemalloc_summary.h"

#include <stdio.h>
#include <string.h>

#include "allocator/jemalloc/mallctl.h"
#include "session/control.h"

#define MAX_EXTRA 8

const char *const jemalloc_summary_names[JEMALLOC_SUMMARY_NFIG] = {
    "stats.allocated", "stats.active", "stats.metadata", "stats.resident",
    "stats.mapped", "stats.retained",
};

/* The per-arena reads: two calls per arena, after the summary's. */
struct arena_calls {
    char names[JEMALLOC_SUMMARY_MAX_ARENAS][2][40];
    uint64_t pages[JEMALLOC_SUMMARY_MAX_ARENAS][2];
};

static size_t plan_arenas(struct arena_calls *ac, struct mallctl_call *calls)
{
    static const char *const kind[2] = {"pdirty", "pmuzzy"};
    size_t n = 0;
    for (unsigned i = 0; i < JEMALLOC_SUMMARY_MAX_ARENAS; i++)
        for (int k = 0; k < 2; k++) {
            snprintf(ac->names[i][k], sizeof ac->names[i][k], "stats.arenas.%u.%s", i,
                     kind[k]);
            calls[n++] = (struct mallctl_call){.name = ac->names[i][k],
                                               .old = &ac->pages[i][k],
                                               .oldlen = sizeof ac->pages[i][k]};
        }
    return n;
}

/* The arenas that answered (one not yet initialized is ENOENT), in
 * bytes.  Only those below narenas: jemalloc still answers index narenas
 * with the merged figures of all (a compatibility it keeps until 6.0). */
static void take_arenas(const struct arena_calls *ac, const struct mallctl_call *calls,
                        uint64_t page, unsigned narenas, struct jemalloc_arenas *arenas)
{
    arenas->n = 0;
    for (unsigned i = 0; i < JEMALLOC_SUMMARY_MAX_ARENAS && i < narenas; i++) {
        if (calls[2 * i].ret || calls[2 * i + 1].ret)
            continue;
        arenas->a[arenas->n++] = (struct jemalloc_arena_pages){
            .index = i, .dirty = ac->pages[i][0] * page, .muzzy = ac->pages[i][1] * page};
    }
}

int jemalloc_summary_read(struct session *s, struct mallctl_call *extra, size_t nextra,
                          struct jemalloc_summary *f)
{
    return jemalloc_summary_read_arenas(s, extra, nextra, f, NULL);
}

int jemalloc_summary_read_arenas(struct session *s, struct mallctl_call *extra, size_t nextra,
                                 struct jemalloc_summary *f, struct jemalloc_arenas *arenas)
{
    enum { NFIG = JEMALLOC_SUMMARY_NFIG, NARENA_CALLS = 2 * JEMALLOC_SUMMARY_MAX_ARENAS };
    const char *const *names = jemalloc_summary_names;
    struct mallctl_call calls[MAX_EXTRA + NFIG + 5 + NARENA_CALLS];
    struct arena_calls ac;
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
        n += plan_arenas(&ac, calls + n);
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
        take_arenas(&ac, calls + per_arena, page, f->narenas, arenas);
    else if (arenas)
        arenas->n = 0;
    return 0;
}
