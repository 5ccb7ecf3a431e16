/* jemalloc_stats_summary.c - see session/jemalloc_stats_summary.h. */
#include "session/jemalloc_stats_summary.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/base/array.h"
#include "session/control.h"
#include "session/jemalloc_stats_json.h"
#include "session/jemalloc_summary.h"
#include "session/say.h"

static size_t reads_add(struct reads *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static size_t reads_add(struct reads *r, const char *fmt, ...)
{
    if (array_reserve(&r->slots, &r->cap, r->n + 1, sizeof *r->slots, 256)) {
        r->oom = true;
        return 0;
    }
    size_t i = r->n++;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->slots[i].name, sizeof r->slots[i].name, fmt, ap);
    va_end(ap);
    r->slots[i].val = 0;
    return i;
}

/* The calls, pointing into the slots: made once every read is added (the
 * slots move while the list grows). */
static void reads_link(struct reads *r)
{
    struct mallctl_call *v = r->n ? realloc(r->v, r->n * sizeof *v) : NULL;
    if (!v) {
        r->oom = true;
        return;
    }
    r->v = v;
    for (size_t i = 0; i < r->n; i++) {
        const struct mallctl_info *info = mallctl_lookup(r->slots[i].name);
        r->v[i] = (struct mallctl_call){.name = r->slots[i].name, .old = &r->slots[i].val,
                                        .oldlen = info ? mallctl_type_size(info->type) : 8};
    }
}

void reads_free(struct reads *r)
{
    free(r->v);
    free(r->slots);
}

/* The classes of the process last read (one process a session). */
static struct size_classes classes;


static int classes_read(struct session *s)
{
    const struct jemalloc_copy *c = jemalloc_copy(s->target,
                                                    jemalloc_selected(s->target));
    if (classes.pid == target_pid(s->target) && classes.mallctl == c->mallctl)
        return 0;
    free(classes.bin_size);
    free(classes.lextent_size);
    memset(&classes, 0, sizeof classes);
    unsigned nbins = 0, nlextents = 0, narenas = 0;
    uint64_t page = 0;
    struct mallctl_call first[] = {
        {.name = "arenas.nbins", .old = &nbins, .oldlen = sizeof nbins},
        {.name = "arenas.nlextents", .old = &nlextents, .oldlen = sizeof nlextents},
        {.name = "arenas.page", .old = &page, .oldlen = sizeof(size_t)},
        {.name = "arenas.narenas", .old = &narenas, .oldlen = sizeof narenas},
    };
    if (control_run_calls(s, first, 4))
        return -1;
    for (int i = 0; i < 4; i++)
        if (first[i].ret)
            return control_mallctl_failed(s, first[i].name, first[i].ret, false);
    if (nbins > 1024 || nlextents > 1024) {
        say_error("jemalloc in process %d reports %u bins and %u large classes: "
                      "more than memprof expects of any build", (int)target_pid(s->target),
                      nbins, nlextents);
        return -1;
    }
    struct reads r = {0};
    for (unsigned j = 0; j < nbins; j++)
        reads_add(&r, "arenas.bin.%u.size", j);
    for (unsigned j = 0; j < nlextents; j++)
        reads_add(&r, "arenas.lextent.%u.size", j);
    int rc = -1;
    reads_link(&r);
    if (r.oom) {
        say_error("out of memory");
        goto out;
    }
    if (control_run_calls(s, r.v, r.n))
        goto out;
    classes.bin_size = calloc(nbins + 1, sizeof *classes.bin_size);
    classes.lextent_size = calloc(nlextents + 1, sizeof *classes.lextent_size);
    if (!classes.bin_size || !classes.lextent_size) {
        say_error("out of memory");
        goto out;
    }
    for (size_t i = 0; i < r.n; i++) {
        if (r.v[i].ret) {
            control_mallctl_failed(s, r.slots[i].name, r.v[i].ret, false);
            goto out;
        }
        if (i < nbins)
            classes.bin_size[i] = r.slots[i].val;
        else
            classes.lextent_size[i - nbins] = r.slots[i].val;
    }
    classes.pid = target_pid(s->target);
    classes.mallctl = c->mallctl;
    classes.nbins = nbins;
    classes.nlextents = nlextents;
    classes.page = page;
    classes.narenas = narenas;
    rc = 0;
out:
    reads_free(&r);
    return rc;
}


static void summary_plan(struct reads *r, struct summary_at *at, unsigned narenas)
{
    at->epoch = reads_add(r, "epoch");
    at->totals = r->n;
    for (size_t i = 0; i < JEMALLOC_SUMMARY_NFIG; i++)
        reads_add(r, "%s", jemalloc_summary_names[i]);
    at->pdirty = reads_add(r, "stats.arenas.%u.pdirty", MALLCTL_ARENAS_ALL);
    at->pmuzzy = reads_add(r, "stats.arenas.%u.pmuzzy", MALLCTL_ARENAS_ALL);
    at->large_all = reads_add(r, "stats.arenas.%u.large.allocated", MALLCTL_ARENAS_ALL);
    at->narenas = reads_add(r, "arenas.narenas");
    at->arena0 = r->n;
    at->arenas = narenas < ARENAS_SHOWN ? narenas : ARENAS_SHOWN;
    for (unsigned i = 0; i < at->arenas; i++) {
        reads_add(r, "stats.arenas.%u.nthreads", i);
        reads_add(r, "stats.arenas.%u.small.allocated", i);
        reads_add(r, "stats.arenas.%u.large.allocated", i);
        reads_add(r, "stats.arenas.%u.pdirty", i);
        reads_add(r, "stats.arenas.%u.pmuzzy", i);
        reads_add(r, "stats.arenas.%u.dirty_decay_ms", i);
        reads_add(r, "stats.arenas.%u.muzzy_decay_ms", i);
    }
    at->bins0 = r->n;
    for (unsigned j = 0; j < classes.nbins; j++)
        reads_add(r, "stats.arenas.%u.bins.%u.curregs", MALLCTL_ARENAS_ALL, j);
    at->large0 = r->n;
    at->large_listed = 0;
    for (unsigned j = 0; j < classes.nlextents && classes.lextent_size[j] <= LARGE_LISTED_MAX; j++) {
        reads_add(r, "stats.arenas.%u.lextents.%u.curlextents", MALLCTL_ARENAS_ALL, j);
        at->large_listed++;
    }
}

int jemalloc_stats_summary_read(struct session *s, struct reads *r, struct summary_at *at,
                                const struct size_classes **cl)
{
    memset(r, 0, sizeof *r);
    *cl = &classes;
    if (classes_read(s))
        return -1;
    /* Arenas only below arenas.narenas as last seen: jemalloc answers
     * stats.arenas.<narenas> with the merged figures of all arenas. */
    summary_plan(r, at, classes.narenas);
    int rc = -1;
    reads_link(r);
    if (r->oom) {
        say_error("out of memory");
        goto out;
    }
    uint64_t one = 1;
    r->v[at->epoch].old = NULL;
    r->v[at->epoch].oldlen = 0;
    r->v[at->epoch].new = &one;
    r->v[at->epoch].newlen = sizeof one;
    if (control_run_calls(s, r->v, r->n))
        goto out;
    if (r->v[at->totals].ret == ENOENT) {
        say_error("%s; nothing was read (rebuild jemalloc with statistics to use "
                      "'stats')", jemalloc_no_stats_why);
        goto out;
    }
    for (size_t i = 0; i < at->arena0; i++)
        if (r->v[i].ret) {
            control_mallctl_failed(s, r->slots[i].name, r->v[i].ret, i == at->epoch);
            goto out;
        }
    if ((unsigned)r->slots[at->narenas].val > classes.narenas)
        classes.narenas = (unsigned)r->slots[at->narenas].val;   /* the next summary reads them */
    rc = 0;
out:
    return rc;
}

