/* addr_tokens.h - the return-address tokens of a profile's "@" lines
 * already read, kept by their text.  A profile has millions of frames but
 * few distinct addresses, so most tokens are found here with one 16-byte
 * load, one hash and one compare, already checked and converted, rather
 * than read digit by digit and hashed by value (most of a big profile's
 * parse time before).
 *
 * A token here is the run of bytes above ' ' at a place; only tokens of
 * fewer than 16 bytes are kept (jemalloc writes 0x and 12 digits), and the
 * table stops taking new ones at 2^16 (2 MiB): the rest are read the slow
 * way, which is always right. */
#ifndef MEMPROF_PROFILE_ADDR_TOKENS_H
#define MEMPROF_PROFILE_ADDR_TOKENS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define ADDR_TOKEN_BYTES 16

struct addr_token {
    unsigned char text[ADDR_TOKEN_BYTES];   /* the token, zeros after it */
    uint32_t index;
    bool used;
};

struct addr_tokens {
    struct addr_token *slots;
    size_t cap, n;
    int shift;                 /* 64 - log2(cap) */
};

/* Remember the token tok[0..len) (a valid address, nothing at or below ' '
 * in it) as index.  Does nothing for longer tokens, when the table is full
 * or out of memory. */
void addr_tokens_add(struct addr_tokens *t, const char *tok, size_t len, uint32_t index);
void addr_tokens_free(struct addr_tokens *t);

/* The slot a token's two 8-byte halves hash to. */
static inline size_t addr_tokens_slot(const struct addr_tokens *t, uint64_t lo, uint64_t hi)
{
    return (size_t)(((lo + (hi << 7 | hi >> 57)) * 0x9e3779b97f4a7c15ull) >> t->shift);
}

/* 16 bytes of 0xff then 16 of 0: the mask keeping a token's first n bytes
 * is at 16 - n. */
extern const unsigned char addr_tokens_keep[2 * ADDR_TOKEN_BYTES];

/* Whether the token at p was added, with its length and the index added
 * with it.  Reads 16 bytes at p: false without looking when fewer than 16
 * are readable before limit.  Without SSE2, never. */
static inline bool addr_tokens_find(const struct addr_tokens *t, const char *p,
                                    const char *limit, size_t *len, uint32_t *index)
{
#ifdef __SSE2__
    if (t->n == 0 || limit - p < ADDR_TOKEN_BYTES)
        return false;
    __m128i bytes = _mm_loadu_si128((const __m128i *)p);
    /* the bytes at or below ' ' (unsigned: max(b, ' ') == ' ') */
    __m128i space = _mm_set1_epi8(' ');
    unsigned ends = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_max_epu8(bytes, space), space));
    if (ends == 0)
        return false;                       /* 16 bytes or more: never kept */
    unsigned n = (unsigned)__builtin_ctz(ends);
    __m128i key = _mm_and_si128(bytes, _mm_loadu_si128(
        (const __m128i *)(addr_tokens_keep + ADDR_TOKEN_BYTES - n)));
    uint64_t lo = (uint64_t)_mm_cvtsi128_si64(key);
    uint64_t hi = (uint64_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(key, key));
    size_t mask = t->cap - 1;
    for (size_t j = addr_tokens_slot(t, lo, hi); t->slots[j].used; j = (j + 1) & mask) {
        __m128i have = _mm_loadu_si128((const __m128i *)t->slots[j].text);
        if (_mm_movemask_epi8(_mm_cmpeq_epi8(have, key)) == 0xffff) {
            *len = n;
            *index = t->slots[j].index;
            return true;
        }
    }
#else
    (void)t, (void)p, (void)limit, (void)len, (void)index;
#endif
    return false;
}

#endif
