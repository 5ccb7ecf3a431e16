/* heap_arenas.c - see session/heap_arenas.h: the rows, their order and
 * JSON, and jemalloc's and tcmalloc's rows (glibc's are
 * session/glibc_arenas.c's). */
#include "session/heap_arenas.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/base/array.h"

struct heap_arena *heap_arenas_add(struct heap_arenas *a, int64_t index, const char *name)
{
    if (array_reserve(&a->v, &a->cap, a->n + 1, sizeof *a->v, 16) < 0)
        return NULL;
    struct heap_arena *r = &a->v[a->n++];
    *r = (struct heap_arena){.index = index, .in_use = HEAP_UNKNOWN, .free = HEAP_UNKNOWN,
                             .free_resident = HEAP_UNKNOWN, .metadata = HEAP_UNKNOWN,
                             .resident = HEAP_UNKNOWN};
    snprintf(r->name, sizeof r->name, "%s", name);
    return r;
}

void heap_arena_extra(struct heap_arena *r, const char *key, uint64_t value)
{
    if (r->nextra < HEAP_ARENA_EXTRA) {
        r->extra[r->nextra].key = key;
        r->extra[r->nextra].shown = false;
        r->extra[r->nextra++].value = value;
    }
}

void heap_arena_extra_shown(struct heap_arena *r, const char *key, uint64_t value)
{
    heap_arena_extra(r, key, value);
    if (r->nextra && r->extra[r->nextra - 1].key == key)
        r->extra[r->nextra - 1].shown = true;
}

static uint64_t known(uint64_t v)
{
    return v == HEAP_UNKNOWN ? 0 : v;
}

uint64_t heap_arena_bytes(const struct heap_arena *r)
{
    if (r->resident != HEAP_UNKNOWN)
        return r->resident;
    uint64_t free = r->free_resident != HEAP_UNKNOWN ? r->free_resident : known(r->free);
    return known(r->in_use) + free;
}

static int by_bytes(const void *x, const void *y)
{
    const struct heap_arena *a = x, *b = y;
    uint64_t p = heap_arena_bytes(a), q = heap_arena_bytes(b);
    if (p != q)
        return p < q ? 1 : -1;
    return a->index < b->index ? -1 : a->index > b->index;
}

void heap_arenas_sort(struct heap_arenas *a)
{
    qsort(a->v, a->n, sizeof *a->v, by_bytes);
}

void heap_arenas_free(struct heap_arenas *a)
{
    free(a->v);
    free(a->heap_starts);
    memset(a, 0, sizeof *a);
}

static void json_known(json_object *o, const char *key, uint64_t v)
{
    if (v != HEAP_UNKNOWN)
        json_object_object_add(o, key, json_object_new_uint64(v));
}

static json_object *row_json(const struct heap_arena *r)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "arena", r->index >= 0 ? json_object_new_int64(r->index)
                                                      : json_object_new_string(r->name));
    json_known(o, "in_use", r->in_use);
    json_known(o, "free", r->free);
    json_known(o, "free_resident", r->free_resident);
    json_known(o, "metadata", r->metadata);
    json_known(o, "resident", r->resident);
    if (r->resident != HEAP_UNKNOWN)
        json_object_object_add(o, "resident_measured", json_object_new_boolean(r->measured));
    for (size_t i = 0; i < r->nextra; i++)
        json_known(o, r->extra[i].key, r->extra[i].value);
    return o;
}

void heap_arenas_json(json_object *o, const struct heap_arenas *a)
{
    json_object *arr = json_object_new_array();
    for (size_t i = 0; i < a->n; i++)
        json_object_array_add(arr, row_json(&a->v[i]));
    json_object_object_add(o, "heap_arenas", arr);
    json_object_object_add(o, "heap_arenas_count", json_object_new_uint64(a->arenas));
    if (a->note[0])
        json_object_object_add(o, "heap_arenas_note", json_object_new_string(a->note));
}

/* ---- jemalloc ---- */

static int jemalloc_row(struct heap_arenas *out, const struct jemalloc_arena_pages *p)
{
    char name[16];
    snprintf(name, sizeof name, "%u", p->index);
    struct heap_arena *r = heap_arenas_add(out, p->index, name);
    if (!r)
        return -1;
    r->free_resident = p->dirty + p->muzzy;
    heap_arena_extra(r, "dirty", p->dirty);
    heap_arena_extra(r, "muzzy", p->muzzy);
    if (!p->detail)
        return 0;
    r->in_use = p->allocated;
    r->metadata = p->metadata;
    r->resident = p->resident;
    heap_arena_extra(r, "active", p->active);
    heap_arena_extra(r, "threads", p->threads);
    return 0;
}

int heap_arenas_jemalloc(struct heap_arenas *out, const struct jemalloc_summary *f,
                         const struct jemalloc_arenas *a)
{
    memset(out, 0, sizeof *out);
    out->arenas = f->narenas;
    if (!f->pages) {
        snprintf(out->note, sizeof out->note, "jemalloc gave no per-arena figures (built "
                 "without statistics: config.stats)");
        return 0;
    }
    for (size_t i = 0; i < a->n; i++)
        if (jemalloc_row(out, &a->a[i]))
            return -1;
    if (f->narenas > JEMALLOC_SUMMARY_MAX_ARENAS)
        snprintf(out->note, sizeof out->note, "only arenas 0 to %u were read (of %u): "
                 "jemalloc's totals count them all", JEMALLOC_SUMMARY_MAX_ARENAS - 1,
                 f->narenas);
    /* resident is jemalloc's own upper bound: untouched pages count */
    heap_arenas_sort(out);
    return 0;
}

/* ---- tcmalloc ---- */

static uint64_t figure(const struct allocator_stats *st, const char *key)
{
    for (size_t i = 0; i < st->nfig; i++)
        if (strcmp(st->fig[i].key, key) == 0)
            return st->fig[i].value;
    return HEAP_UNKNOWN;
}

/* tcmalloc has no arenas: its page heap is one row (its caches' free
 * bytes with it: resident too). */
int heap_arenas_tcmalloc(struct heap_arenas *out, const struct allocator_stats *st)
{
    memset(out, 0, sizeof *out);
    out->arenas = 1;
    struct heap_arena *r = heap_arenas_add(out, -1, "page heap");
    if (!r)
        return -1;
    r->in_use = st->in_use;
    r->free_resident = st->free_held;
    r->resident = st->from_system;
    heap_arena_extra(r, "pageheap_free", figure(st, "tcmalloc.pageheap_free_bytes"));
    heap_arena_extra_shown(r, "released", figure(st, "tcmalloc.pageheap_unmapped_bytes"));
    heap_arena_extra(r, "caches_free",
                     st->free_held != HEAP_UNKNOWN &&
                     figure(st, "tcmalloc.pageheap_free_bytes") <= st->free_held
                         ? st->free_held - figure(st, "tcmalloc.pageheap_free_bytes")
                         : HEAP_UNKNOWN);
    return 0;
}
