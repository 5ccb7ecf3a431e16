/* mallctl.h - what memprof knows about jemalloc's mallctl namespace: the
 * type and access of every name (generated from jemalloc(3)), the check of
 * a call's shape before it is made, parsing and printing values, and
 * turning mallctl's error codes into sentences.
 * Nothing here calls mallctl: attach/ does that. */
#ifndef MEMPROF_MALLCTL_H
#define MEMPROF_MALLCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/base/error.h"

enum mallctl_type {
    MALLCTL_BOOL,
    MALLCTL_UNSIGNED,   /* unsigned */
    MALLCTL_U32,        /* uint32_t */
    MALLCTL_SIZE,       /* size_t */
    MALLCTL_SSIZE,      /* ssize_t */
    MALLCTL_U64,        /* uint64_t */
    MALLCTL_I64,        /* int64_t */
    MALLCTL_STRING,     /* const char * */
    MALLCTL_POINTER,    /* an address (uint64_t *, extent_hooks_t *): read only */
    MALLCTL_VOID,       /* no value: an action (arena.N.purge) */
};

/* As jemalloc(3) writes them: r-, -w, rw, "r- or -w" (one call reads or
 * writes, never both), and -- (a void action). */
enum mallctl_access {
    MALLCTL_R,
    MALLCTL_W,
    MALLCTL_RW,
    MALLCTL_R_OR_W,
    MALLCTL_ACTION,
};

struct mallctl_info {
    const char *name;       /* may hold "<i>"/"<j>" for a decimal index */
    enum mallctl_type type; /* what a read returns (and a write takes) */
    enum mallctl_type write_type; /* differs for arenas.create/lookup */
    enum mallctl_access access;
    const char *requires;   /* build option it needs ("--enable-prof"), or NULL */
    const char *since;      /* jemalloc version that brought it, when the page says */
    const char *doc;        /* the first sentence of jemalloc(3)'s description */
};

/* The table generated from jemalloc(3) (allocator/jemalloc/mallctl_names.c, by
 * tools/gen_mallctl_table.py), terminated by a NULL name. */
extern const struct mallctl_info mallctl_table[];
extern const char mallctl_table_source[];          /* "jemalloc 5.3.0-..." */
extern const unsigned mallctl_table_page_entries;  /* headings on the page */

/* The entry for name (matching "<i>"/"<j>" against digits), or NULL. */
const struct mallctl_info *mallctl_lookup(const char *name);

/* MALLCTL_ARENAS_ALL and MALLCTL_ARENAS_DESTROYED of jemalloc.h. */
#define MALLCTL_ARENAS_ALL 4096u
#define MALLCTL_ARENAS_DESTROYED 4097u

/* "r-", "-w", "rw", "r- or -w", "--" (as the page writes them). */
const char *mallctl_access_name(enum mallctl_access a);

/* One call's shape: what memprof is about to ask of mallctl. */
struct mallctl_shape {
    bool read;              /* oldp given */
    size_t oldlen;
    bool write;             /* newp given */
    size_t newlen;
    const char *string;     /* the string written, for string names */
};

/* Check a call before it is made: the name's indices, read and write as
 * its access allows, lengths as its type says, a string of a sane length,
 * no address written.  info is the table's entry, or (for a name the table
 * does not know) one made from the user's --type.  Returns 0, or -1 with
 * err saying what is wrong and how to ask instead. */
int mallctl_check_call(const char *name, const struct mallctl_info *info,
                       const struct mallctl_shape *shape, struct mp_error *err);

/* Names whose write may carry no value (newp NULL is a documented request:
 * prof.dump to jemalloc's own file name, prof.reset keeping the rate). */
bool mallctl_write_optional(const char *name);

/* What a call of name does to the process when it is more than a read (a
 * read that creates something, an action that discards memory): a sentence
 * for the user, and whether it needs --force.  NULL for everything else. */
const char *mallctl_side_effect(const char *name, bool *needs_force);

/* "bool", "unsigned", "uint32_t", "size_t", "ssize_t", "uint64_t",
 * "int64_t", "string", "pointer", "void". */
const char *mallctl_type_name(enum mallctl_type t);
int mallctl_type_parse(const char *s, enum mallctl_type *t, struct mp_error *err);
/* Bytes mallctl reads or writes for the type (a pointer for strings). */
size_t mallctl_type_size(enum mallctl_type t);

/* Parse text into a value of the type, in buf (at least 8 bytes); *len is
 * set to the type's size.  Not for strings. */
int mallctl_value_parse(enum mallctl_type t, const char *text, void *buf,
                        size_t *len, struct mp_error *err);

/* Print a non-string value into out. */
void mallctl_value_format(enum mallctl_type t, const void *buf, char *out,
                          size_t outlen);

/* A sentence for a non-zero mallctl return code: what went wrong and what
 * to do.  conf_var is the MALLOC_CONF variable this copy of jemalloc reads
 * (see mallctl_conf_var). */
void mallctl_explain(const char *name, int ret, bool writing,
                     const char *conf_var, struct mp_error *err);

/* Why profiling cannot be turned on in this process, and what would make
 * it possible: rebuilding jemalloc with profiling when config_prof is false
 * (for Rust's tikv-jemallocator / jemalloc-sys, its `profiling` feature),
 * otherwise restarting with conf_var=prof:true (opt.prof is read only at
 * start, and jemalloc 5.1 accepts prof.active=true then samples nothing). */
void mallctl_explain_no_profiling(bool config_prof, const char *conf_var,
                                  struct mp_error *err);

/* The environment variable a jemalloc copy with this symbol prefix reads:
 * "" -> MALLOC_CONF, "je_" -> JE_MALLOC_CONF, "_rjem_" -> _RJEM_MALLOC_CONF. */
void mallctl_conf_var(const char *prefix, char *buf, size_t buflen);

/* Whether a mallctl failure (name, ret) is profiling being unavailable
 * rather than what mallctl_explain would say: without config.prof every
 * prof name fails with ENOENT; without opt.prof jemalloc refuses prof.dump
 * with EFAULT before opening any file (not a full filesystem). */
bool mallctl_failure_is_no_profiling(const char *name, int ret, bool config_prof,
                                     bool opt_prof);

/* The cost of sampling at 2^lg_sample (FIELD-NOTES 4).  A sampled small
 * allocation is promoted to 16 KiB while it lives, and each allocation is
 * sampled at most once, with a probability of about 1 - e^(-size/2^lg):
 * bytes * 16 KiB / 2^lg only while 2^lg is well above the average small
 * allocation, and never more than 16 KiB per live small allocation. */
struct mallctl_sampling_cost {
    double extra_bytes;     /* estimated extra memory; < 0: unknown */
    double ratio;           /* extra_bytes / small_bytes; < 0: unknown */
    bool every_allocation;  /* (nearly) every allocation is sampled (rate 0,
                               or 2^lg at most the average allocation): the
                               percentage formula does not hold there */
};

/* small_bytes, small_count: the live small allocations (count 0: unknown,
 * then the bound cannot be applied and rate 0 has no estimate). */
void mallctl_sampling_cost(uint64_t small_bytes, uint64_t small_count, unsigned lg_sample,
                           struct mallctl_sampling_cost *cost);

#endif
