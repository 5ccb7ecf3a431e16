/* html.h - one self-contained HTML page about a series of heap
 * profiles of a process: the run's summary, in-use memory over time (a
 * chart of the total and the top growing functions), the top and growth
 * tables, the growth flame graph and the call graph.  Everything is
 * inline (styles, SVG, the flame graph's script; no font, image or script
 * is fetched) so the file opens from disk, offline, and a Content Security
 * Policy in it forbids any fetch.  Every string from the target is written
 * through text_markup_put.
 *
 * The caller gives the views (one analysis context, so node ids are
 * shared), their times and names, and what it knows of the process; the
 * call graph arrives already drawn (Graphviz's SVG), or with the reason it
 * could not be.  lib/ knows no process and runs no program. */
#ifndef MEMPROF_REPORT_HTML_H
#define MEMPROF_REPORT_HTML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "lib/analysis/analysis.h"
#include "lib/base/error.h"

struct report_html_dump {
    const char *name;                  /* the dump's name in the session */
    const struct analysis_view *view;  /* needed for the first and the last
                                        * only when the caller gives the trend */
    int64_t taken_at;                  /* seconds since the epoch; 0 unknown */
    double inuse_bytes, inuse_objects; /* the profile's totals, and */
    size_t nstacks;                    /* its stacks, for the dumps table */
};

struct report_html_input {
    struct analysis *a;
    const struct analysis_options *o;  /* --focus, --objects, ... as for top */
    const struct report_html_dump *dumps;   /* oldest first */
    size_t ndumps;
    const char *series;        /* the series' name; NULL: the session's dumps */
    long pid;                  /* 0: not known (offline) */
    const char *exe;           /* NULL: not known */
    const char *graph_svg;     /* the latest dump's call graph drawn by dot, */
    size_t graph_svg_len;      /* or NULL and ... */
    const char *graph_note;    /* ... why there is none (shown in the page) */
    int64_t generated_at;      /* seconds since the epoch */
    /* The trend of the dumps, computed by the caller one dump at a time
     * (only when report_html_over_time says so), or NULL: computed here
     * from every dump's view. */
    const struct trend *trend;
};

/* Whether the page will have its over-time parts (and so a trend). */
bool report_html_over_time(const struct report_html_input *in);

/* The over-time parts (chart, growth table, growth flame graph) need 2 or
 * more dumps with known, increasing times; without them the page says
 * why.  Writes the page to out.  0, or -1 with err set (out of memory,
 * interrupted). */
int report_html(const struct report_html_input *in, FILE *out, struct mp_error *err);

#endif
