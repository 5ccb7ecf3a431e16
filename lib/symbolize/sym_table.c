/* sym_table.c - interned strings and the u64 map used by the symbolizer.
 * Strings live in large chunks (one malloc per 64 KiB, not per string)
 * because a big profile interns hundreds of thousands of names. */
#include "lib/symbolize/sym_table.h"

#include <stdlib.h>
#include <string.h>

#include "lib/base/u64map.h"

bool sym_u64map_get(const struct sym_u64map *m, uint64_t key, uint64_t *val)
{
    if (!m->cap)
        return false;
    size_t mask = m->cap - 1;
    for (size_t i = u64map_mix(key) & mask;; i = (i + 1) & mask) {
        const struct sym_u64map_slot *s = &m->slots[i];
        if (!s->val_plus1)
            return false;
        if (s->key == key) {
            *val = s->val_plus1 - 1;
            return true;
        }
    }
}

static void place(struct sym_u64map_slot *slots, size_t cap, uint64_t key,
                  uint64_t val_plus1)
{
    size_t mask = cap - 1;
    size_t i = u64map_mix(key) & mask;
    while (slots[i].val_plus1 && slots[i].key != key)
        i = (i + 1) & mask;
    slots[i].key = key;
    slots[i].val_plus1 = val_plus1;
}

static int grow(struct sym_u64map *m)
{
    size_t cap = m->cap ? m->cap * 2 : 64;
    struct sym_u64map_slot *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return -1;
    for (size_t i = 0; i < m->cap; i++)
        if (m->slots[i].val_plus1)
            place(slots, cap, m->slots[i].key, m->slots[i].val_plus1);
    free(m->slots);
    m->slots = slots;
    m->cap = cap;
    return 0;
}

int sym_u64map_put(struct sym_u64map *m, uint64_t key, uint64_t val)
{
    uint64_t old;
    if (sym_u64map_get(m, key, &old)) {
        place(m->slots, m->cap, key, val + 1);
        return 0;
    }
    /* Keep the load under 1/2 so probe sequences stay short. */
    if ((m->n + 1) * 2 > m->cap && grow(m))
        return -1;
    place(m->slots, m->cap, key, val + 1);
    m->n++;
    return 0;
}

void sym_u64map_free(struct sym_u64map *m)
{
    free(m->slots);
    memset(m, 0, sizeof *m);
}

/* ---- interned strings ---- */

#define CHUNK_SIZE (64 * 1024)

struct chunk {
    struct chunk *next;
    size_t used, size;
    char data[];
};

struct sym_interner {
    const char **slots;   /* open addressing on the string hash */
    size_t cap, n;
    struct chunk *chunks;
};

static uint64_t hash_bytes(const char *s, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

struct sym_interner *sym_interner_new(void)
{
    return calloc(1, sizeof(struct sym_interner));
}

void sym_interner_free(struct sym_interner *in)
{
    if (!in)
        return;
    for (struct chunk *c = in->chunks, *next; c; c = next) {
        next = c->next;
        free(c);
    }
    free(in->slots);
    free(in);
}

static char *store(struct sym_interner *in, const char *str, size_t len)
{
    struct chunk *c = in->chunks;
    if (!c || c->size - c->used < len + 1) {
        size_t size = len + 1 > CHUNK_SIZE ? len + 1 : CHUNK_SIZE;
        c = malloc(sizeof *c + size);
        if (!c)
            return NULL;
        c->used = 0;
        c->size = size;
        /* A string bigger than a chunk gets its own chunk behind the
         * current one, so the current one keeps filling up. */
        if (in->chunks && size > CHUNK_SIZE) {
            c->next = in->chunks->next;
            in->chunks->next = c;
        } else {
            c->next = in->chunks;
            in->chunks = c;
        }
    }
    char *dst = c->data + c->used;
    memcpy(dst, str, len);
    dst[len] = '\0';
    c->used += len + 1;
    return dst;
}

static int grow_set(struct sym_interner *in)
{
    size_t cap = in->cap ? in->cap * 2 : 1024;
    const char **slots = calloc(cap, sizeof *slots);
    if (!slots)
        return -1;
    for (size_t i = 0; i < in->cap; i++) {
        const char *s = in->slots[i];
        if (!s)
            continue;
        size_t j = hash_bytes(s, strlen(s)) & (cap - 1);
        while (slots[j])
            j = (j + 1) & (cap - 1);
        slots[j] = s;
    }
    free(in->slots);
    in->slots = slots;
    in->cap = cap;
    return 0;
}

const char *sym_intern_len(struct sym_interner *in, const char *str, size_t len)
{
    if (!str)
        return NULL;
    if ((in->n + 1) * 2 > in->cap && grow_set(in))
        return NULL;
    size_t mask = in->cap - 1;
    size_t i = hash_bytes(str, len) & mask;
    for (; in->slots[i]; i = (i + 1) & mask) {
        const char *s = in->slots[i];
        if (strncmp(s, str, len) == 0 && s[len] == '\0')
            return s;
    }
    char *copy = store(in, str, len);
    if (!copy)
        return NULL;
    in->slots[i] = copy;
    in->n++;
    return copy;
}

const char *sym_intern(struct sym_interner *in, const char *str)
{
    return str ? sym_intern_len(in, str, strlen(str)) : NULL;
}
