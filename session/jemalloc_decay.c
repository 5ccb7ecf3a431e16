/* jemalloc_decay.c - see session/jemalloc_decay.h.  Per arena i (then the
 * default of new arenas, arenas.*): dirty, muzzy, all in one stop; an
 * arena not yet initialized answers EFAULT and is left out. */
#include "session/jemalloc_decay.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session/control.h"
#include "session/jemalloc_summary.h"
#include "session/say.h"

static int parse_decay(const char *text, ssize_t *ms)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (!*text || *end || errno || v < -1 || v > (long long)SSIZE_MAX) {
        say_error("'%s' is not a decay time: give milliseconds, 0 (purge at once) "
                      "or -1 (never purge; write it after '--': decay -- -1)", text);
        return -1;
    }
    *ms = (ssize_t)v;
    return 0;
}

/* The calls of one stop: two per row. */
struct decay_calls {
    size_t rows, n;
    struct mallctl_call *calls;
    ssize_t *old;
    char (*names)[48];
};

static int plan(struct decay_calls *c, unsigned narenas, const struct jemalloc_decay *d)
{
    c->rows = (size_t)narenas + 1;
    c->n = c->rows * 2;
    c->calls = calloc(c->n, sizeof *c->calls);
    c->old = calloc(c->n, sizeof *c->old);
    c->names = calloc(c->n, sizeof *c->names);
    if (!c->calls || !c->old || !c->names) {
        say_error("out of memory");
        return -1;
    }
    for (size_t r = 0; r < c->rows; r++)
        for (int k = 0; k < 2; k++) {
            size_t i = r * 2 + (size_t)k;
            const char *kind = k ? "muzzy" : "dirty";
            if (r < narenas)
                snprintf(c->names[i], sizeof c->names[i], "arena.%zu.%s_decay_ms", r, kind);
            else
                snprintf(c->names[i], sizeof c->names[i], "arenas.%s_decay_ms", kind);
            c->calls[i] = (struct mallctl_call){.name = c->names[i], .old = &c->old[i],
                                                .oldlen = sizeof c->old[i]};
            if (d->set) {
                c->calls[i].new = &d->want[k];
                c->calls[i].newlen = sizeof d->want[k];
            }
        }
    return 0;
}

/* The rows that answered (initialized arenas, new arenas' default). */
static int take(const struct decay_calls *c, unsigned narenas, struct jemalloc_decay *d)
{
    d->rows = calloc(c->rows, sizeof *d->rows);
    if (!d->rows) {
        say_error("out of memory");
        return -1;
    }
    for (size_t r = 0; r < c->rows; r++) {
        size_t i = r * 2;
        if (c->calls[i].ret || c->calls[i + 1].ret)
            continue;     /* not initialized */
        d->rows[d->n++] = (struct jemalloc_decay_row){
            .new_arenas = r >= narenas, .arena = r, .dirty_ms = c->old[i],
            .muzzy_ms = c->old[i + 1]};
    }
    return 0;
}

static int run(struct session *s, struct decay_calls *c, unsigned narenas,
               struct jemalloc_decay *d)
{
    if (plan(c, narenas, d) || control_run_calls(s, c->calls, c->n))
        return -1;
    for (size_t i = c->n - 2; i < c->n; i++)
        if (c->calls[i].ret)
            return control_mallctl_failed(s, c->names[i], c->calls[i].ret, d->set);
    for (size_t i = 0; d->set && i < c->n; i++)
        if (!c->calls[i].ret)
            control_note_decay(s, c->names[i], c->old[i], d->want[i % 2]);
    return take(c, narenas, d);
}

int jemalloc_decay_run(struct session *s, char **values, int nvalues, struct jemalloc_decay *d)
{
    memset(d, 0, sizeof *d);
    d->set = nvalues > 0;
    for (int i = 0; i < nvalues && i < 2; i++)
        if (parse_decay(values[i], &d->want[i]))
            return -1;
    if (nvalues == 1)
        d->want[1] = d->want[0];
    struct jemalloc_summary f;
    if (jemalloc_summary_read(s, NULL, 0, &f))
        return -1;
    struct decay_calls c = {0};
    int rc = run(s, &c, f.narenas, d);
    free(c.calls);
    free(c.old);
    free(c.names);
    if (rc)
        jemalloc_decay_free(d);
    return rc;
}

void jemalloc_decay_free(struct jemalloc_decay *d)
{
    free(d->rows);
    d->rows = NULL;
    d->n = 0;
}
