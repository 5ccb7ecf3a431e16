/* session.c - the session's list of heap profiles and its symbolizer. */
#include "session/session.h"
#include "lib/analysis/analysis.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/base/array.h"

struct session_dump *session_add_dump(struct session *s, struct profile *p,
                                      const char *name, const char *source)
{
    if (array_reserve(&s->dumps, &s->dumps_cap, s->ndumps + 1, sizeof *s->dumps, 8))
        return NULL;
    struct session_dump *d = &s->dumps[s->ndumps];
    memset(d, 0, sizeof *d);
    char autoname[32];
    if (!name) {
        snprintf(autoname, sizeof autoname, "dump%u", ++s->dump_seq);
        name = autoname;
    }
    /* A reused name replaces nothing: the newer dump shadows the older one
     * in session_find_dump, and both stay listed. */
    snprintf(d->name, sizeof d->name, "%s", name);
    d->source = strdup(source ? source : "");
    d->parsed = p;
    d->info = (struct session_dump_info){p->nstacks, p->total, p->period, p->has_alloc,
                                         p->truncated, p->taken_at};
    d->last_use = ++s->use_clock;
    s->ndumps++;
    return d;
}

struct session_dump *session_find_dump(struct session *s, const char *name)
{
    if (s->ndumps == 0)
        return NULL;
    if (!name)
        return &s->dumps[s->ndumps - 1];
    for (size_t i = s->ndumps; i > 0; i--)
        if (strcmp(s->dumps[i - 1].name, name) == 0)
            return &s->dumps[i - 1];
    for (size_t i = s->ndumps; i > 0; i--)
        if (strcmp(s->dumps[i - 1].series, name) == 0)
            return &s->dumps[i - 1];
    return NULL;
}

static void dump_release(struct session_dump *d)
{
    session_dump_store_release(d);
    profile_free(d->parsed);
    free(d->source);
    free(d->saved_path);
}

void session_remove_dump(struct session *s, size_t i)
{
    if (i >= s->ndumps)
        return;
    dump_release(&s->dumps[i]);
    memmove(&s->dumps[i], &s->dumps[i + 1], (s->ndumps - i - 1) * sizeof *s->dumps);
    s->ndumps--;
}

long session_series_regular(struct session *s, const char *name, size_t **idx)
{
    long n = session_series(s, name, idx), kept = 0;
    for (long i = 0; i < n; i++)
        if (!s->dumps[(*idx)[i]].peak)
            (*idx)[kept++] = (*idx)[i];
    if (n > 0 && kept == 0) {
        free(*idx);
        *idx = NULL;
    }
    return n < 0 ? n : kept;
}

bool session_series_name_ok(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n > 40 || name[0] == '-')
        return false;
    bool digits = true;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)name[i];
        if (!isalnum(c) && c != '_' && c != '-')
            return false;
        if (!isdigit(c))
            digits = false;
    }
    return !digits;
}

void session_series_add(struct session *s, struct session_dump *d, const char *series)
{
    unsigned last = 0;
    for (size_t i = 0; i < s->ndumps; i++)
        if (&s->dumps[i] != d && strcmp(s->dumps[i].series, series) == 0 &&
            s->dumps[i].series_seq > last)
            last = s->dumps[i].series_seq;
    snprintf(d->series, sizeof d->series, "%s", series);
    d->series_seq = last + 1;
}

long session_series(struct session *s, const char *name, size_t **idx)
{
    *idx = NULL;
    if (!name)
        for (size_t i = s->ndumps; i > 0 && !name; i--)
            if (s->dumps[i - 1].series[0])
                name = s->dumps[i - 1].series;
    size_t n = 0;
    for (size_t i = 0; i < s->ndumps; i++)
        if (!name || strcmp(s->dumps[i].series, name) == 0)
            n++;
    if (n == 0)
        return 0;
    *idx = malloc(n * sizeof **idx);
    if (!*idx)
        return -1;
    n = 0;
    for (size_t i = 0; i < s->ndumps; i++)
        if (!name || strcmp(s->dumps[i].series, name) == 0)
            (*idx)[n++] = i;
    return (long)n;
}

struct symbolizer *session_symbolizer(struct session *s)
{
    if (s->symbolizer)
        return s->symbolizer;
    char root[96];
    struct symbolizer_options opts = {
        .root = s->sysroot,
        .exe = s->exe,
        .debug_dir = s->debug_dir,
        .warnings = stderr,
    };
    if (!opts.root && s->target) {
        target_proc_dir(s->target, root, sizeof root - 5);
        strcat(root, "/root");
        opts.root = root;
    }
    s->symbolizer = symbolizer_new(&opts);
    return s->symbolizer;
}

void session_check_inputs(struct session *s, struct session_dump *d)
{
    struct symbolizer *sym = session_symbolizer(s);
    if (d->inputs_checked || !sym || !d->parsed)
        return;
    d->inputs_checked = true;
    analysis_check_inputs(sym, d->parsed, d->name, stderr);
}

void session_drop_symbolizer(struct session *s)
{
    symbolizer_free(s->symbolizer);
    s->symbolizer = NULL;
}

bool profile_run_running(const struct session *s)
{
    return s->run && s->run->state == RUN_RUNNING;
}

void profile_run_free(struct profile_run *r)
{
    if (r)
        free(r->save_dir);
    free(r);
}

const char *profile_run_state_name(enum run_state st)
{
    switch (st) {
    case RUN_RUNNING: return "running";
    case RUN_COMPLETED: return "completed";
    case RUN_STOPPED: return "stopped";
    case RUN_PROCESS_ENDED: return "process ended";
    case RUN_FAILED: return "failed";
    }
    return "?";
}

void session_hold_interrupt(struct session *s)
{
    if (s->hold_interrupt)
        s->hold_interrupt();
}

void session_release_interrupt(struct session *s)
{
    if (s->release_interrupt)
        s->release_interrupt();
}

void session_changes_clear(struct session_changes *c)
{
    free(c->decay);
    *c = (struct session_changes){0};
}

void session_free(struct session *s)
{
    session_changes_clear(&s->changes);
    for (size_t i = 0; i < s->ndumps; i++)
        dump_release(&s->dumps[i]);
    free(s->dumps);
    session_spool_remove(s);
    profile_run_free(s->run);
    sampler_free(s->sampler);
    session_drop_symbolizer(s);
    target_close(s->target);
    free(s->memory_prev);
    free(s->sysroot);
    free(s->dump_dir);
    free(s->exe);
    free(s->debug_dir);
    memset(s, 0, sizeof *s);
}
