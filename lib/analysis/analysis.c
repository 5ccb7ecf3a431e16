/* analysis.c - the analysis context: the node table, per-profile views
 * (stacks as node ids with allocator frames stripped), and queries
 * (sample choice, thread filter, --focus/--ignore/--hide with verdicts
 * cached per node). */
#include "lib/analysis/analysis.h"
#include "lib/base/array.h"
#include "lib/analysis/internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define EMPTY_SLOT UINT32_MAX
#define MAX_INLINE 16          /* frames one address may expand to */

/* ---- a bump allocator for node names: nodes never die before the context ---- */

struct analysis_arena {
    struct analysis_arena *next;
    size_t used, cap;
    char data[];
};

static const char *arena_strdup(struct analysis_arena **head, const char *s)
{
    size_t len = strlen(s) + 1;
    struct analysis_arena *ar = *head;
    if (!ar || ar->cap - ar->used < len) {
        size_t cap = len > 65536 ? len : 65536;
        ar = malloc(sizeof *ar + cap);
        if (!ar)
            return NULL;
        ar->next = *head;
        ar->used = 0;
        ar->cap = cap;
        *head = ar;
    }
    char *p = ar->data + ar->used;
    memcpy(p, s, len);
    ar->used += len;
    return p;
}

static void arena_free(struct analysis_arena *ar)
{
    while (ar) {
        struct analysis_arena *next = ar->next;
        free(ar);
        ar = next;
    }
}

/* ---- the node table ---- */

/* What makes two frames the same node at a granularity.  Names are
 * interned by the resolver, so pointers compare. */
struct node_key {
    const char *function, *file;
    int line;
    uint64_t offset;           /* addresses: object offset (ASLR-proof) */
    const char *object;
};

static struct node_key frame_key(enum analysis_granularity g,
                                 const struct symbol_frame *f)
{
    struct node_key k = {0};
    switch (g) {
    case ANALYSIS_FUNCTIONS:
        k.function = f->function;
        break;
    case ANALYSIS_LINES:
        k.function = f->function;
        k.file = f->file;
        k.line = f->line;
        break;
    case ANALYSIS_FILES:
        /* Without a file name the function stands in (as jeprof falls
         * back to the address). */
        if (f->file)
            k.file = f->file;
        else
            k.function = f->function;
        break;
    case ANALYSIS_ADDRESSES:
        k.function = f->function;
        k.object = f->object;
        k.offset = f->object_offset;
        break;
    }
    return k;
}

static uint64_t key_hash(const struct node_key *k)
{
    uint64_t h = (uintptr_t)k->function;
    h = u64map_mix(h ^ (uintptr_t)k->file * 31);
    h = u64map_mix(h ^ ((uint64_t)(unsigned)k->line << 20) ^ k->offset);
    return u64map_mix(h ^ (uintptr_t)k->object);
}

/* Node keys are kept beside the nodes (same index) for comparison. */
static bool key_equal(const struct node_key *a, const struct node_key *b)
{
    return a->function == b->function && a->file == b->file &&
           a->line == b->line && a->offset == b->offset && a->object == b->object;
}

static const char *node_name(struct analysis *a, const struct node_key *k,
                             const struct symbol_frame *f, uint64_t addr)
{
    char buf[4096];
    switch (a->granularity) {
    case ANALYSIS_FUNCTIONS:
        return f->function;
    case ANALYSIS_FILES:
        return k->file ? k->file : f->function;
    case ANALYSIS_LINES:
        if (!f->file)
            return f->function;
        snprintf(buf, sizeof buf, "%s %s:%d", f->function, f->file, f->line);
        break;
    case ANALYSIS_ADDRESSES:
        snprintf(buf, sizeof buf, "0x%" PRIx64 " %s", addr, f->function);
        break;
    }
    return arena_strdup(&a->names, buf);
}

static int grow_node_slots(struct analysis *a)
{
    size_t cap = a->node_slots_cap ? a->node_slots_cap * 2 : 1024;
    uint32_t *slots = malloc(cap * sizeof *slots);
    if (!slots)
        return -1;
    memset(slots, 0xff, cap * sizeof *slots);
    for (size_t i = 0; i < a->nnodes; i++) {
        size_t j = key_hash(&a->keys[i]) & (cap - 1);
        while (slots[j] != EMPTY_SLOT)
            j = (j + 1) & (cap - 1);
        slots[j] = (uint32_t)i;
    }
    free(a->node_slots);
    a->node_slots = slots;
    a->node_slots_cap = cap;
    return 0;
}

static int append_node(struct analysis *a, const struct node_key *k,
                       const struct symbol_frame *f, uint64_t addr)
{
    if (a->nnodes == a->nodes_cap) {
        /* nodes and keys grow together: keys first, on a copy of the cap */
        size_t keys_cap = a->nodes_cap;
        if (array_reserve(&a->keys, &keys_cap, a->nnodes + 1, sizeof *a->keys, 256) ||
            array_reserve(&a->nodes, &a->nodes_cap, keys_cap, sizeof *a->nodes, 256))
            return -1;
    }
    const char *name = node_name(a, k, f, addr);
    if (!name)
        return -1;
    a->nodes[a->nnodes] = (struct analysis_node){
        .name = name, .function = f->function, .file = f->file,
        .line = f->line, .addr = addr,
    };
    a->keys[a->nnodes] = *k;
    return (int)a->nnodes++;
}

/* The node id for a frame, creating the node on first sight. */
static int64_t intern_node(struct analysis *a, const struct symbol_frame *f,
                           uint64_t addr)
{
    struct node_key k = frame_key(a->granularity, f);
    if ((a->nnodes + 1) * 2 > a->node_slots_cap && grow_node_slots(a) < 0)
        return -1;
    size_t mask = a->node_slots_cap - 1;
    size_t j = key_hash(&k) & mask;
    for (; a->node_slots[j] != EMPTY_SLOT; j = (j + 1) & mask)
        if (key_equal(&a->keys[a->node_slots[j]], &k))
            return a->node_slots[j];
    int id = append_node(a, &k, f, addr);
    if (id < 0)
        return -1;
    a->node_slots[j] = (uint32_t)id;
    return id;
}

struct analysis *analysis_new(enum analysis_granularity g,
                              analysis_resolve_fn *resolve, void *cookie)
{
    struct analysis *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    a->granularity = g;
    a->resolve = resolve;
    a->cookie = cookie;
    return a;
}

static void ids_unmap(uint32_t *v, size_t cap);

static void view_free(struct analysis_view *v)
{
    if (!v)
        return;
    free(v->stack_start);
    ids_unmap(v->node_ids, v->node_ids_cap);
    free(v);
}

void analysis_free(struct analysis *a)
{
    if (!a)
        return;
    for (size_t i = 0; i < a->nviews; i++)
        view_free(a->views[i]);
    free(a->views);
    free(a->nodes);
    free(a->keys);
    free(a->node_slots);
    arena_free(a->names);
    free(a);
}

/* ---- building a view ---- */

/* What one of the profile's distinct return addresses (profile->addrs)
 * expands to: its node ids innermost first and which of those frames are
 * the allocator's.  Indexed like profile->addrs and filled on first use,
 * so the per-frame loop (millions of frames in a big profile) is an array
 * read; most addresses are one frame, kept in the entry itself. */
struct addr_entry {
    uint32_t id;               /* count == 1: the node id; else index into ids */
    uint8_t count;             /* 0: not resolved yet */
    uint16_t alloc_mask;       /* bit k: frame k is the allocator's */
};

struct addr_cache {
    struct addr_entry *entries;   /* one per profile->addrs */
    uint32_t *ids;             /* node ids of multi-frame (inlined) addresses */
    size_t nids, ids_cap;
};

static int addr_cache_init(struct addr_cache *c, const struct profile *p)
{
    memset(c, 0, sizeof *c);
    c->entries = calloc(p->naddrs ? p->naddrs : 1, sizeof *c->entries);
    return c->entries ? 0 : -1;
}

static void addr_cache_fini(struct addr_cache *c)
{
    free(c->entries);
    free(c->ids);
}

static int push_ids(struct addr_cache *c, const uint32_t *ids, int n)
{
    if (array_reserve(&c->ids, &c->ids_cap, c->nids + (size_t)n, sizeof *c->ids, 1024))
        return -1;
    memcpy(c->ids + c->nids, ids, (size_t)n * sizeof *ids);
    c->nids += (size_t)n;
    return 0;
}

static int resolve_addr(struct analysis *a, const struct profile *p,
                        struct addr_cache *c, struct addr_entry *e, uint64_t addr)
{
    struct symbol_frame frames[MAX_INLINE];
    uint32_t ids[MAX_INLINE];
    /* Return addresses point after the call: look up the call itself.
     * Every granularity expands inlined calls (DWARF), as pprof does: an
     * inlined function is a function in top, focus, peek and the pictures
     * exactly as in list and the pprof export. */
    int n = a->resolve(a->cookie, p, addr ? addr - 1 : 0, SYMBOLIZE_LINES,
                       frames, MAX_INLINE);
    if (n < 1)
        n = 1;
    if (n > MAX_INLINE)
        n = MAX_INLINE;
    e->alloc_mask = 0;
    for (int i = 0; i < n; i++) {
        int64_t id = intern_node(a, &frames[i], addr);
        if (id < 0)
            return -1;
        ids[i] = (uint32_t)id;
        if (frames[i].is_allocator)
            e->alloc_mask |= (uint16_t)(1u << i);
    }
    e->id = n == 1 ? ids[0] : (uint32_t)c->nids;
    if (n > 1 && push_ids(c, ids, n) < 0)
        return -1;
    e->count = (uint8_t)n;
    return 0;
}

/* What frame i of p expands to, resolved on first use. */
static const struct addr_entry *lookup_frame(struct analysis *a, const struct profile *p,
                                             struct addr_cache *c, size_t i)
{
    struct addr_entry *e = &c->entries[p->frames[i]];
    if (e->count == 0 && resolve_addr(a, p, c, e, profile_frame(p, i)) < 0)
        return NULL;
    return e;
}

/* The node ids of every frame of a profile: millions of them, written
 * once.  They live in their own mapping with transparent huge pages
 * requested, because first-touch page faults (one per 4 KiB, costly under
 * virtualisation) otherwise dominate building a view. */
struct id_vec {
    uint32_t *v;
    size_t n, cap;
};

static uint32_t *ids_map(size_t cap)
{
    size_t bytes = cap * sizeof(uint32_t);
    void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    madvise(m, bytes, MADV_HUGEPAGE);   /* advice only: fine if refused */
    return m;
}

static void ids_unmap(uint32_t *v, size_t cap)
{
    if (v)
        munmap(v, cap * sizeof *v);
}

static int id_vec_reserve(struct id_vec *x, size_t more)
{
    if (x->n + more <= x->cap)
        return 0;
    size_t cap = x->cap ? x->cap : 4096;
    while (cap < x->n + more)
        cap *= 2;
    uint32_t *v = ids_map(cap);
    if (!v)
        return -1;
    if (x->n)
        memcpy(v, x->v, x->n * sizeof *v);
    ids_unmap(x->v, x->cap);
    x->v = v;
    x->cap = cap;
    return 0;
}

/* Append one stack's node ids, innermost first, minus the allocator's own
 * frames at the top (keep the first frame outside it; if every frame is
 * the allocator's, keep the outermost so the bytes still show somewhere). */
static int append_stack(struct analysis *a, const struct profile *p,
                        struct addr_cache *c, const struct profile_stack *st,
                        struct id_vec *out)
{
    size_t start = out->n;
    bool stripping = !a->keep_allocator;
    if (id_vec_reserve(out, st->nframes) < 0)
        return -1;
    for (uint32_t f = 0; f < st->nframes; f++) {
        const struct addr_entry *e = lookup_frame(a, p, c, (size_t)st->frame0 + f);
        if (!e)
            return -1;
        if (e->count == 1 && !stripping) {     /* the common case */
            out->v[out->n++] = e->id;
            continue;
        }
        /* Inlined frames: room for them and one slot per frame still to come. */
        if (e->count > 1 && id_vec_reserve(out, e->count + st->nframes - f) < 0)
            return -1;
        for (uint32_t k = 0; k < e->count; k++) {
            uint32_t id = e->count == 1 ? e->id : c->ids[e->id + k];
            if (stripping && (e->alloc_mask >> k & 1)) {
                out->n = start;   /* only the last allocator frame survives */
            } else if (stripping) {
                out->n = start;   /* a real caller: drop the allocator frame */
                stripping = false;
            }
            out->v[out->n++] = id;
        }
    }
    return 0;
}

static const volatile sig_atomic_t *cancel_flag;

void analysis_set_cancel(const volatile sig_atomic_t *flag)
{
    cancel_flag = flag;
}

bool analysis_cancelled(void)
{
    return cancel_flag && *cancel_flag;
}

static struct analysis_view *build_view(struct analysis *a, const struct profile *p,
                                        struct mp_error *err)
{
    struct analysis_view *v = calloc(1, sizeof *v);
    struct addr_cache cache;
    struct id_vec ids = {0};
    if (!v || addr_cache_init(&cache, p) < 0)
        goto oom_nocache;
    v->profile = p;
    v->stack_start = malloc((p->nstacks + 1) * sizeof *v->stack_start);
    if (!v->stack_start || id_vec_reserve(&ids, p->nframes + 1) < 0)
        goto oom;
    for (size_t i = 0; i < p->nstacks; i++) {
        if ((i & 1023) == 0 && analysis_cancelled()) {
            addr_cache_fini(&cache);
            ids_unmap(ids.v, ids.cap);
            view_free(v);
            mp_error_set(err, "interrupted while symbolizing %s",
                         p->name ? p->name : "the profile");
            return NULL;
        }
        v->stack_start[i] = (uint32_t)ids.n;
        if (append_stack(a, p, &cache, &p->stacks[i], &ids) < 0)
            goto oom;
    }
    v->stack_start[p->nstacks] = (uint32_t)ids.n;
    v->node_ids = ids.v;
    v->node_ids_cap = ids.cap;
    addr_cache_fini(&cache);
    return v;
oom:
    addr_cache_fini(&cache);
oom_nocache:
    ids_unmap(ids.v, ids.cap);
    view_free(v);
    mp_error_set(err, "out of memory while symbolizing %s", p->name ? p->name : "the profile");
    return NULL;
}

const struct analysis_view *analysis_view(struct analysis *a, const struct profile *p,
                                          struct mp_error *err)
{
    for (size_t i = 0; i < a->nviews; i++)
        if (a->views[i]->profile == p)
            return a->views[i];
    struct analysis_view **views = realloc(a->views, (a->nviews + 1) * sizeof *views);
    if (!views) {
        mp_error_set(err, "out of memory");
        return NULL;
    }
    a->views = views;
    struct analysis_view *v = build_view(a, p, err);
    if (!v)
        return NULL;
    a->views[a->nviews++] = v;
    return v;
}

void analysis_forget(struct analysis *a, const struct profile *p)
{
    for (size_t i = 0; i < a->nviews; i++) {
        if (a->views[i]->profile != p)
            continue;
        view_free(a->views[i]);
        a->views[i] = a->views[--a->nviews];
        return;
    }
}
