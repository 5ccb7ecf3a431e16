/* addr_tokens.c - a profile's address tokens by their text, for the
 * parser (addr_tokens.h says why).  Open addressing on the token's 16
 * bytes (zeros after its end); the lookup, inline in the parser's loop,
 * is in the header. */
#include "lib/profile/addr_tokens.h"

#include <stdlib.h>
#include <string.h>

#define FIRST_CAP 256
#define MAX_CAP (1u << 16)

const unsigned char addr_tokens_keep[2 * ADDR_TOKEN_BYTES] = {
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
};

static size_t slot_of(const struct addr_tokens *t, const unsigned char *key)
{
    uint64_t lo, hi;
    memcpy(&lo, key, 8);
    memcpy(&hi, key + 8, 8);
    return addr_tokens_slot(t, lo, hi);
}

static void insert(struct addr_tokens *t, const struct addr_token *e)
{
    size_t mask = t->cap - 1, j = slot_of(t, e->text);
    while (t->slots[j].used) {
        if (memcmp(t->slots[j].text, e->text, ADDR_TOKEN_BYTES) == 0)
            return;
        j = (j + 1) & mask;
    }
    t->slots[j] = *e;
    t->n++;
}

static bool grow(struct addr_tokens *t)
{
    size_t cap = t->cap ? t->cap * 2 : FIRST_CAP;
    if (cap > MAX_CAP)
        return false;
    struct addr_token *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return false;
    struct addr_tokens old = *t;
    t->slots = slots;
    t->cap = cap;
    t->n = 0;
    t->shift = 64;
    for (size_t c = cap; c > 1; c >>= 1)
        t->shift--;
    for (size_t i = 0; i < old.cap; i++)
        if (old.slots[i].used)
            insert(t, &old.slots[i]);
    free(old.slots);
    return true;
}

void addr_tokens_add(struct addr_tokens *t, const char *tok, size_t len, uint32_t index)
{
    if (len == 0 || len >= ADDR_TOKEN_BYTES)
        return;
    if ((t->n + 1) * 2 > t->cap && !grow(t))
        return;
    struct addr_token e = {.index = index, .used = true};
    memcpy(e.text, tok, len);
    insert(t, &e);
}

void addr_tokens_free(struct addr_tokens *t)
{
    free(t->slots);
    memset(t, 0, sizeof *t);
}
