/* addr_line.c - the previous "@" line and what the next one shares with
 * it (addr_line.h says why).  Bytes are compared 8 at a time; a token is
 * shared when its bytes and the separator beside it are the same. */
#include "lib/profile/addr_line.h"
#include "lib/base/array.h"

#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* How many first bytes a[0..n) and b[0..n) have in common. */
static size_t common_head(const char *a, const char *b, size_t n)
{
    size_t i = 0;
#ifdef __SSE2__
    for (; i + 16 <= n; i += 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(a + i));
        __m128i y = _mm_loadu_si128((const __m128i *)(b + i));
        unsigned same = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, y));
        if (same != 0xffff)
            return i + (size_t)__builtin_ctz(~same);
    }
#endif
    for (; i + 8 <= n; i += 8) {
        uint64_t x, y;
        memcpy(&x, a + i, 8);
        memcpy(&y, b + i, 8);
        if (x != y)
            return i + (size_t)__builtin_ctzll(x ^ y) / 8;   /* little-endian */
    }
    while (i < n && a[i] == b[i])
        i++;
    return i;
}

/* How many last bytes a[..an) and b[..bn) have in common, at most max. */
static size_t common_tail(const char *a, size_t an, const char *b, size_t bn, size_t max)
{
    size_t i = 0;
#ifdef __SSE2__
    for (; i + 16 <= max; i += 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(a + an - i - 16));
        __m128i y = _mm_loadu_si128((const __m128i *)(b + bn - i - 16));
        unsigned same = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, y));
        if (same != 0xffff)     /* bit 15 is the last byte */
            return i + (size_t)__builtin_clz(~same << 16);
    }
#endif
    for (; i + 8 <= max; i += 8) {
        uint64_t x, y;
        memcpy(&x, a + an - i - 8, 8);
        memcpy(&y, b + bn - i - 8, 8);
        if (x != y)
            return i + (size_t)__builtin_clzll(x ^ y) / 8;
    }
    while (i < max && a[an - i - 1] == b[bn - i - 1])
        i++;
    return i;
}

/* How many of the first tokens end before offset d (ends rise). */
static size_t tokens_ending_before(const struct addr_span *t, size_t n, size_t d)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (t[mid].end < d)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

struct addr_line_share addr_line_compare(const struct addr_line *m, const char *p, size_t len)
{
    struct addr_line_share s = {0, 0, 0, len};
    if (!m->valid || len > UINT32_MAX)
        return s;
    size_t d = common_head(p, m->text, len < m->len ? len : m->len);
    /* the separator after a shared token is the same too */
    s.head = tokens_ending_before(m->tok, m->ntokens, d);
    s.mid_s = s.head ? m->tok[s.head - 1].end : 0;
    size_t room = len - s.mid_s;          /* the tail stays after the head */
    size_t sfx = common_tail(p, len, m->text, m->len, room < m->len ? room : m->len);
    /* ...and the separator before a shared last token */
    while (s.head + s.tail < m->ntokens) {
        size_t from_end = m->len - m->tok[m->ntokens - 1 - s.tail].start;
        if (from_end + 1 > sfx)
            break;
        s.tail++;
    }
    if (s.tail)
        s.mid_e = len - (m->len - m->tok[m->ntokens - s.tail].start) - 1;
    return s;
}

int addr_line_begin(struct addr_line *m, size_t len, const struct addr_line_share *s)
{
    size_t most = len / 2 + 1;            /* tokens are separated */
    if (len > UINT32_MAX ||
        array_reserve(&m->next, &m->cap_next, most, sizeof *m->next, 64) ||
        array_reserve(&m->text, &m->cap, len ? len : 1, 1, 256)) {
        m->valid = false;
        return -1;
    }
    if (s->head)
        memcpy(m->next, m->tok, s->head * sizeof *m->tok);
    m->next_n = s->head;
    return 0;
}

void addr_line_end(struct addr_line *m, const char *p, size_t len,
                   const struct addr_line_share *s, size_t frame0)
{
    /* the shared last tokens, where they are in this line */
    for (size_t i = m->ntokens - s->tail; i < m->ntokens; i++) {
        uint32_t shift = (uint32_t)(m->len - len);      /* modulo 2^32 */
        m->next[m->next_n++] = (struct addr_span){m->tok[i].start - shift, m->tok[i].end - shift};
    }
    struct addr_span *t = m->tok;
    size_t cap = m->cap_tok;
    m->tok = m->next, m->cap_tok = m->cap_next, m->ntokens = m->next_n;
    m->next = t, m->cap_next = cap, m->next_n = 0;
    memcpy(m->text, p, len);
    m->len = len;
    m->frame0 = frame0;
    m->valid = true;
}

void addr_line_forget(struct addr_line *m)
{
    m->valid = false;
    m->ntokens = m->next_n = 0;
}

void addr_line_free(struct addr_line *m)
{
    free(m->text);
    free(m->tok);
    free(m->next);
    memset(m, 0, sizeof *m);
}
