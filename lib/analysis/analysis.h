/* analysis.h - the analysis engine: heap profiles turned into symbolized
 * stacks once, then aggregated jeprof-style (top, traces, peek, tree, list,
 * diff).  Printing goes only to a FILE * the caller passes.
 *
 * Model.  An analysis context works at one granularity (functions, lines,
 * files or addresses).  It owns a table of nodes - one per distinct thing
 * shown at that granularity ("leak_big", "leak_big alloc.c:12", ...) - and,
 * per profile, a view: each stack as a list of node ids, innermost first
 * (inlined calls expanded into frames of their own, at every granularity),
 * with the allocator's own frames already stripped from the top.  Because
 * node ids are shared by every profile in a context, two profiles of
 * processes with different ASLR layouts compare by node, never by address.
 *
 * Symbolization goes through a resolver callback so the engine can be
 * tested with made-up symbols; analysis_symbolizer_resolve (in
 * lib/analysis/resolver.c) is the real one. */
#ifndef MEMPROF_ANALYSIS_H
#define MEMPROF_ANALYSIS_H

#include <regex.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "lib/base/error.h"
#include "lib/profile/profile.h"
#include "lib/symbolize/symbolize.h"

/* The version of every --json document memprof prints (its "schema" key):
 * raised when a key changes meaning or goes away, not when one is added. */
#define MEMPROF_JSON_SCHEMA 1

enum analysis_granularity {
    ANALYSIS_FUNCTIONS,     /* default */
    ANALYSIS_LINES,         /* "function file:line" (needs DWARF) */
    ANALYSIS_FILES,         /* source file */
    ANALYSIS_ADDRESSES,     /* "0xaddr function" */
};
#define ANALYSIS_NGRANULARITIES 4

/* Symbolize one call address (return address - 1) of profile p: fill up to
 * max frames, innermost first, return how many (>= 1). */
typedef int analysis_resolve_fn(void *cookie, const struct profile *p,
                                uint64_t addr, enum symbolize_detail detail,
                                struct symbol_frame *frames, int max);

/* The real resolver: cookie is a struct symbolizer *. */
int analysis_symbolizer_resolve(void *cookie, const struct profile *p,
                                uint64_t addr, enum symbolize_detail detail,
                                struct symbol_frame *frames, int max);

/* Record with p the build-id of each object its maps name, as the
 * symbolizer reads them now (call right after taking a live dump).
 * 0, or -1 out of memory. */
int analysis_record_objects(struct symbolizer *sym, struct profile *p);

/* Warn to warnings about inputs that would give wrong names without a
 * word: no memory map at all, an object whose build-id differs from the
 * one recorded when the dump was taken, or (nothing recorded) an object
 * modified after the dump was taken.  name: the dump, for messages. */
void analysis_check_inputs(struct symbolizer *sym, const struct profile *p,
                           const char *name, FILE *warnings);

/* One thing shown in a report. */
struct analysis_node {
    const char *name;       /* as printed; owned by the context */
    const char *function;   /* interned by the resolver */
    const char *file;       /* NULL when unknown */
    int line;
    uint64_t addr;          /* ANALYSIS_ADDRESSES: first address seen */
};

/* A profile's stacks as node ids (innermost first, allocator stripped). */
struct analysis_view {
    const struct profile *profile;
    uint32_t *stack_start;  /* nstacks + 1 offsets into node_ids */
    uint32_t *node_ids;
    size_t node_ids_cap;    /* its mapping's size, in ids */
};

struct analysis {
    enum analysis_granularity granularity;
    analysis_resolve_fn *resolve;
    void *cookie;

    struct analysis_node *nodes;
    size_t nnodes, nodes_cap;
    struct node_key *keys;          /* what identifies each node */
    uint32_t *node_slots;           /* hash of nodes: index or UINT32_MAX */
    size_t node_slots_cap;
    struct analysis_arena *names;   /* storage for formatted node names */

    struct analysis_view **views;   /* cached, one per profile */
    size_t nviews;
    bool keep_allocator;            /* --show-alloc: keep the allocator's own
                                     * frames (set before the first view) */
};

/* Cancellation without signals: the caller points the engine at a flag
 * (memprof's prompt: one its SIGINT handler sets); building a view fails
 * with "interrupted" and long printing loops stop early once it is
 * non-zero.  NULL (the default): never cancelled. */
void analysis_set_cancel(const volatile sig_atomic_t *flag);
bool analysis_cancelled(void);

struct analysis *analysis_new(enum analysis_granularity g,
                              analysis_resolve_fn *resolve, void *cookie);
void analysis_free(struct analysis *a);

/* The view of profile p, built on first use and cached in the context
 * until analysis_forget (profiles are matched by pointer). */
const struct analysis_view *analysis_view(struct analysis *a,
                                          const struct profile *p,
                                          struct mp_error *err);
/* Drop the cached view of p (call before freeing p). */
void analysis_forget(struct analysis *a, const struct profile *p);

/* ---- options shared by every report ---- */

struct analysis_options {
    enum analysis_granularity granularity;
    bool objects;           /* --objects: rank by object counts */
    bool alloc;             /* --alloc: allocated ever, not in use */
    bool cum;               /* --cum: sort by cumulative */
    bool exact;             /* --bytes: exact byte counts, no units */
    bool has_thread;        /* --thread ID */
    uint64_t thread;
    const char *focus, *ignore, *hide;  /* POSIX EREs, or NULL */
    const char *match;      /* peek/list: the function RE */
    double nodefraction;    /* tree and graph pruning, fraction of the total */
    double edgefraction;    /* graph: edges under this fraction left out */
    int limit;              /* rows to print; <= 0 means all */
};

/* Bytes and objects together: every report carries both. */
struct analysis_amount {
    double bytes, objects;
};

/* A compiled query: options checked against one profile, regexes
 * compiled, and each regex's verdict cached per node (a node is matched
 * once however many stacks hold it). */
enum { QUERY_FOCUS, QUERY_IGNORE, QUERY_HIDE, QUERY_MATCH, QUERY_NRE };
struct analysis_query {
    struct analysis *a;
    const struct analysis_options *opt;
    regex_t re[QUERY_NRE];
    bool have[QUERY_NRE];
    uint8_t *verdict[QUERY_NRE];   /* per node: 0 unknown, 1 no, 2 yes */
    size_t nverdicts;
    uint32_t *scratch;             /* one stack's node ids after --hide */
    size_t scratch_cap;
    bool page_faults;              /* every profile read is a page-fault one:
                                    * counts are faults, bytes faulted in */
};

/* What the query's values are, for people: "in use", "allocated" or
 * "faulted in"; and what a count counts: "objects" or "faults". */
const char *analysis_measured(const struct analysis_query *q);
const char *analysis_counted(const struct analysis_query *q);

/* Check the options against the profiles the query will read (--alloc
 * needs cumulative counts, --thread must name a thread) and compile the
 * regexes.  Returns 0, or -1 with err saying what to do. */
int analysis_query_init(struct analysis_query *q, struct analysis *a,
                        const struct analysis_options *opt,
                        const struct profile *const *profiles, size_t nprofiles,
                        struct mp_error *err);
void analysis_query_fini(struct analysis_query *q);

/* The value of stack i of profile p under the query's sample choice
 * (inuse/alloc, thread). */
struct analysis_amount analysis_stack_amount(const struct analysis_query *q,
                                             const struct profile *p, size_t i);
/* The whole profile's total under the query's sample choice (no regex). */
struct analysis_amount analysis_total(const struct analysis_query *q,
                                      const struct profile *p);

/* Stack i of the view after --focus/--ignore/--hide.  Returns false when
 * focus/ignore drop it; else sets *ids (valid until the next call) and *n
 * (may be 0 when --hide removed every frame). */
bool analysis_stack_nodes(struct analysis_query *q, const struct analysis_view *v,
                          size_t i, const uint32_t **ids, size_t *n);

/* Whether node id matches the query's regex `which` (cached). */
bool analysis_node_matches(struct analysis_query *q, int which, uint32_t id);

/* The ranking value of an amount (bytes or objects per --objects). */
static inline double analysis_key(const struct analysis_options *o,
                                  struct analysis_amount m)
{
    return o->objects ? m.objects : m.bytes;
}

/* ---- formatting ---- */

/* A value as printed: objects as plain counts, bytes with B/KiB/MiB/GiB
 * and one decimal, or exact with --bytes.  plus: prefix positive values
 * with '+' (growth). */
char *analysis_format(const struct analysis_options *o, double v, bool plus,
                      char *buf, size_t len);
char *analysis_format_bytes(double bytes, bool exact, bool plus,
                            char *buf, size_t len);
/* "12.3%", or "-" when the total is 0. */
char *analysis_percent(double v, double total, char *buf, size_t len);

/* ---- reports (analysis_*.c) ---- */

/* What a report says about where its data came from. */
struct analysis_source {
    const char *name;        /* dump name */
    const char *base_name;   /* diff: the older dump, else NULL */
};

/* top, or with base non-NULL the growth from base to v (diff). */
int analysis_top(struct analysis *a, const struct analysis_view *v,
                 const struct analysis_view *base,
                 const struct analysis_options *o, const struct analysis_source *src,
                 bool json, FILE *out, struct mp_error *err);
/* top of v with one more column: each row's change (flat, or cum with
 * o->cum) since the older view `since` of the same context; the header
 * adds "Growth: +X since NAME" (src->base_name).  For live views. */
int analysis_top_since(struct analysis *a, const struct analysis_view *v,
                       const struct analysis_view *since, const struct analysis_options *o,
                       const struct analysis_source *src, FILE *out, struct mp_error *err);

/* top's rows as data, for a renderer of its own (the HTML report): every
 * node holding something, sorted as top sorts them (flat, or cum with
 * o->cum); *rows is malloc'd (free it), *total the profile's total under
 * the options.  0, or -1 with err set. */
struct analysis_top_row {
    uint32_t node;
    struct analysis_amount flat, cum;
};
int analysis_top_rows(struct analysis *a, const struct analysis_view *v,
                      const struct analysis_options *o, struct analysis_top_row **rows,
                      size_t *nrows, struct analysis_amount *total, struct mp_error *err);
int analysis_traces(struct analysis *a, const struct analysis_view *v,
                    const struct analysis_options *o, const struct analysis_source *src,
                    bool json, FILE *out, struct mp_error *err);
int analysis_peek(struct analysis *a, const struct analysis_view *v,
                  const struct analysis_options *o, const struct analysis_source *src,
                  bool json, FILE *out, struct mp_error *err);
int analysis_tree(struct analysis *a, const struct analysis_view *v,
                  const struct analysis_options *o, const struct analysis_source *src,
                  bool json, FILE *out, struct mp_error *err);
/* list needs a context at ANALYSIS_LINES granularity. */
int analysis_list(struct analysis *a, const struct analysis_view *v,
                  const struct analysis_options *o, const struct analysis_source *src,
                  bool json, FILE *out, struct mp_error *err);

/* ---- pictures (lib/analysis/flame.c, lib/analysis/graph.c) ---- */

struct analysis_flame_options {
    bool folded;            /* collapsed stacks ("a;b;c 123") instead of SVG */
    int width;              /* SVG width in pixels; 0: 1200 */
    double min_width;       /* SVG: frames narrower than this many pixels
                             * are left out; 0: 0.1 */
};

/* A flame graph of v (roots at the bottom, widths by the ranking index),
 * or with base non-NULL of the growth from base to v (only stacks that
 * grew).  Honours the common options; --json does not apply. */
int analysis_flame(struct analysis *a, const struct analysis_view *v,
                   const struct analysis_view *base, const struct analysis_options *o,
                   const struct analysis_source *src, const struct analysis_flame_options *f,
                   FILE *out, struct mp_error *err);

/* The call graph of v as Graphviz DOT, jeprof style: a node per function
 * (flat and cum), an edge per caller -> callee weighted by what flows
 * through it, nodes under o->nodefraction and edges under o->edgefraction
 * of the total left out. */
int analysis_graph(struct analysis *a, const struct analysis_view *v,
                   const struct analysis_options *o, const struct analysis_source *src,
                   FILE *out, struct mp_error *err);

#endif
