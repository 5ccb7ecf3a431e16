/* internal.h - pieces shared by the analysis engine's files and
 * by nothing else: the header lines and JSON envelope every report starts
 * with, growable arrays. */
#ifndef MEMPROF_ANALYSIS_INTERNAL_H
#define MEMPROF_ANALYSIS_INTERNAL_H

#include "lib/base/array.h"
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "lib/analysis/analysis.h"
#include "lib/base/u64map.h"

/* 0 when value is a fraction from 0 to 1; else -1, err naming option. */
int analysis_check_fraction(const char *option, double value, struct mp_error *err);

/* "Total: 53.1 MiB in use, 28106 objects (dump2, 1234 stacks)" and, when
 * a filter is active, a second line with what the filters kept. */
void analysis_print_total(FILE *out, const struct analysis_query *q,
                          const struct analysis_source *src, const struct profile *p,
                          struct analysis_amount total, struct analysis_amount shown);

/* The JSON object every report starts from: dump, sample, index,
 * granularity, total_bytes, total_objects. */
json_object *analysis_json_head(const struct analysis_query *q,
                                const struct analysis_source *src,
                                struct analysis_amount total);
/* Add function/file/line fields of a node to a JSON object. */
void analysis_json_node(json_object *o, const struct analysis_node *n,
                        const char *key);
void analysis_json_amount(json_object *o, const char *prefix, struct analysis_amount m);
/* Print and free the object (one document, newline-terminated). */
int analysis_json_emit(json_object *o, FILE *out, struct mp_error *err);


/* Whether any stack filter is active (changes the totals shown). */
bool analysis_filtered(const struct analysis_query *q);

/* Make room for need elements in a growable array *vp of *cap elements of
 * elem bytes (doubling, at least 256).  Returns 0, or -1 when out of
 * memory (the array is left as it was). */
static inline int analysis_reserve(void *vp, size_t *cap, size_t need, size_t elem)
{
    return array_reserve(vp, cap, need, elem, 256);
}

#endif
