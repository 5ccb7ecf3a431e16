/* mallctl.h - what memprof knows about jemalloc's mallctl namespace: the
 * type and access of each name it uses (FIELD-NOTES section 1), parsing and
 * printing values, and turning mallctl's error codes into sentences.
 * Nothing here calls mallctl: attach/ does that. */
#ifndef MEMPROF_MALLCTL_H
#define MEMPROF_MALLCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/error.h"

enum mallctl_type {
    MALLCTL_BOOL,
    MALLCTL_UNSIGNED,   /* unsigned */
    MALLCTL_SIZE,       /* size_t */
    MALLCTL_SSIZE,      /* ssize_t */
    MALLCTL_U64,        /* uint64_t */
    MALLCTL_STRING,     /* const char * */
    MALLCTL_VOID,       /* no value: an action (arena.N.purge) */
};

enum mallctl_access { MALLCTL_R = 1, MALLCTL_W = 2, MALLCTL_RW = 3, MALLCTL_ACTION = 4 };

struct mallctl_info {
    const char *name;       /* may hold "<i>" for a decimal arena index */
    enum mallctl_type type;
    enum mallctl_access access;
    const char *doc;
};

/* The built-in table, terminated by a NULL name. */
extern const struct mallctl_info mallctl_table[];

/* The entry for name (matching "<i>" against digits), or NULL. */
const struct mallctl_info *mallctl_lookup(const char *name);

/* "bool", "unsigned", "size_t", "ssize_t", "uint64_t", "string", "void". */
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

/* The environment variable a jemalloc copy with this symbol prefix reads:
 * "" -> MALLOC_CONF, "je_" -> JE_MALLOC_CONF, "_rjem_" -> _RJEM_MALLOC_CONF. */
void mallctl_conf_var(const char *prefix, char *buf, size_t buflen);

/* Estimated extra memory, in bytes, of sampling at 2^lg_sample when the
 * process has allocated_bytes of live small allocations (FIELD-NOTES 4:
 * a sampled small allocation is promoted to 16 KiB). */
double mallctl_sampling_overhead(uint64_t allocated_bytes, unsigned lg_sample);

#endif
