/* memory_diagnose.c - see session/memory_diagnose.h: the list of
 * diagnoses, its order and its forms (JSON, text); the causes themselves
 * are diagnose_allocator.c's and diagnose_process.c's. */
#include "session/memory_diagnose.h"

#include <stdlib.h>
#include <string.h>

#include "lib/base/array.h"
#include "lib/base/text_escape.h"

const char *const memory_diagnose_keys[DIAGNOSE_NKEYS] = {
    "thp_inflation", "jemalloc_unpurged", "glibc_arenas_free", "tcmalloc_pageheap_free",
    "exited_thread_stacks", "growing_mapping", "cgroup_near_limit",
};

void memory_diagnose_jemalloc_calls(struct diagnose_jemalloc_settings *set)
{
    set->calls[0] = (struct mallctl_call){.name = "background_thread",
        .old = &set->background_thread, .oldlen = sizeof set->background_thread};
    set->calls[1] = (struct mallctl_call){.name = "arenas.dirty_decay_ms",
        .old = &set->dirty_decay_ms, .oldlen = sizeof set->dirty_decay_ms};
    set->calls[2] = (struct mallctl_call){.name = "arenas.muzzy_decay_ms",
        .old = &set->muzzy_decay_ms, .oldlen = sizeof set->muzzy_decay_ms};
}

struct memory_diagnosis *diagnose_add(struct memory_diagnoses *d, const char *key,
                                      uint64_t bytes)
{
    if (array_reserve(&d->v, &d->cap, d->n + 1, sizeof *d->v, 8) < 0)
        return NULL;
    struct memory_diagnosis *g = &d->v[d->n++];
    memset(g, 0, sizeof *g);
    g->key = key;
    g->bytes = bytes;
    return g;
}

static int by_bytes(const void *x, const void *y)
{
    const struct memory_diagnosis *a = x, *b = y;
    if (a->bytes != b->bytes)
        return a->bytes < b->bytes ? 1 : -1;
    int k = strcmp(a->key, b->key);
    return k ? k : strcmp(a->cause, b->cause);
}

int memory_diagnose(const struct diagnose_input *in, struct memory_diagnoses *out)
{
    int (*const causes[])(const struct diagnose_input *, struct memory_diagnoses *) = {
        diagnose_thp, diagnose_jemalloc_unpurged, diagnose_glibc_arenas, diagnose_tcmalloc,
        diagnose_exited_stacks, diagnose_growing, diagnose_cgroup,
    };
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < sizeof causes / sizeof *causes; i++)
        if (causes[i](in, out) < 0) {
            memory_diagnoses_free(out);
            return -1;
        }
    if (out->n)
        qsort(out->v, out->n, sizeof *out->v, by_bytes);
    return 0;
}

void memory_diagnoses_free(struct memory_diagnoses *d)
{
    free(d->v);
    memset(d, 0, sizeof *d);
}

void memory_diagnoses_json(json_object *o, const struct memory_diagnoses *d)
{
    json_object *arr = json_object_new_array();
    for (size_t i = 0; i < d->n; i++) {
        json_object *e = json_object_new_object();
        json_object_object_add(e, "cause", json_object_new_string(d->v[i].cause));
        json_object_object_add(e, "key", json_object_new_string(d->v[i].key));
        json_object_object_add(e, "bytes", json_object_new_uint64(d->v[i].bytes));
        json_object_object_add(e, "remedy", json_object_new_string(d->v[i].remedy));
        json_object_array_add(arr, e);
    }
    json_object_object_add(o, "diagnoses", arr);
}

void memory_diagnoses_text(FILE *out, const struct memory_diagnoses *d)
{
    if (!d->n) {
        fprintf(out, "\ndiagnoses            none (no cause of %.0f MiB or more measured)\n",
                (double)DIAGNOSE_MIN_BYTES / (1 << 20));
        return;
    }
    fprintf(out, "\ndiagnoses (largest first)\n");
    for (size_t i = 0; i < d->n; i++) {
        char eb[TEXT_ESCAPE_BUF];
        fprintf(out, "  %10.1f MiB  %s\n", (double)d->v[i].bytes / (1 << 20),
                text_escape(d->v[i].cause, eb, sizeof eb));
        fprintf(out, "                  what to do: %s\n",
                text_escape(d->v[i].remedy, eb, sizeof eb));
    }
}

uint64_t memory_diagnoses_key(const struct memory_diagnoses *d, const char *key)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < d->n; i++)
        if (strcmp(d->v[i].key, key) == 0)
            sum += d->v[i].bytes;
    return sum;
}
