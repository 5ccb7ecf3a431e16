/* jemalloc_summary.c - jemalloc's whole-process figures in one stop
 * (jemalloc_summary.h). */
#include "session/jemalloc_summary.h"

#include <stdio.h>
#include <string.h>

#include "allocator/jemalloc/mallctl.h"
#include "session/control.h"

#define MAX_EXTRA 4

const char *const jemalloc_summary_names[JEMALLOC_SUMMARY_NFIG] = {
    "stats.allocated", "stats.active", "stats.metadata", "stats.resident",
    "stats.mapped", "stats.retained",
};

int jemalloc_summary_read(struct session *s, struct mallctl_call *extra, size_t nextra,
                          struct jemalloc_summary *f)
{
    enum { NFIG = JEMALLOC_SUMMARY_NFIG };
    const char *const *names = jemalloc_summary_names;
    struct mallctl_call calls[MAX_EXTRA + NFIG + 5];
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
    calls[n++] = (struct mallctl_call){.name = "arenas.narenas", .old = &f->narenas,
                                       .oldlen = sizeof f->narenas};
    if (control_run_calls(s, calls, n))
        return -1;
    for (size_t i = 0; i < nextra; i++)
        extra[i] = calls[i];
    if (calls[n - 1].ret)
        return control_mallctl_failed(s, "arenas.narenas", calls[n - 1].ret, false);
    f->stats = calls[first].ret == 0 && calls[first + 1].ret == 0;
    f->pages = f->stats && !calls[pages].ret && !calls[pages + 1].ret && !calls[pages + 2].ret;
    f->dirty = f->pages ? pdirty * page : 0;
    f->muzzy = f->pages ? pmuzzy * page : 0;
    return 0;
}
