/* addr_line.h - the previous "@" line of a profile, remembered with where
 * its tokens are, so that the parser reads only what a line does not share
 * with it.  Stacks written one after the other mostly share their first
 * frames (the allocator's, the caller's module) and their last ones (main,
 * the thread's start): in the 250k-stack bench profile 14 of 16 frames.
 * Comparing bytes 8 at a time, those frames are copied from the previous
 * stack instead of being read token by token (most of the parse before).
 *
 * Only what the careful reading of the previous line gave is reused: a
 * shared token's bytes and the separator beside it are identical, so the
 * careful reading would give the same frame.  Lines of 2^32 bytes or more
 * are not remembered. */
#ifndef MEMPROF_PROFILE_ADDR_LINE_H
#define MEMPROF_PROFILE_ADDR_LINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct addr_span {
    uint32_t start, end;       /* byte offsets in the line, end exclusive */
};

struct addr_line {
    char *text;                /* the previous line (after '@') */
    size_t len, cap;
    struct addr_span *tok;     /* its tokens */
    size_t ntokens, cap_tok;
    struct addr_span *next;    /* the tokens of the line being read */
    size_t next_n, cap_next;
    size_t frame0;             /* its frames in the profile's frames */
    bool valid;
};

/* What the line p[0..len) shares with the previous one: its first head
 * tokens are the previous line's first head, its last tail tokens the
 * previous line's last tail, and the tokens between are in
 * p[*mid_s .. *mid_e).  With no previous line, head = tail = 0 and the
 * middle is all of it. */
struct addr_line_share {
    size_t head, tail, mid_s, mid_e;
};
struct addr_line_share addr_line_compare(const struct addr_line *m, const char *p, size_t len);

/* Start recording the line of len bytes read with share s: 0, or -1 when
 * it cannot be (too long, out of memory): then addr_line_token must not be
 * called and nothing is remembered, which is always right. */
int addr_line_begin(struct addr_line *m, size_t len, const struct addr_line_share *s);

/* A token of the middle read at offsets [s, e) (addr_line_begin made
 * room for every token the line can hold). */
static inline void addr_line_token(struct addr_line *m, size_t s, size_t e)
{
    m->next[m->next_n++] = (struct addr_span){(uint32_t)s, (uint32_t)e};
}

/* The line p[0..len) read whole (its frames at frame0): remember it. */
void addr_line_end(struct addr_line *m, const char *p, size_t len,
                   const struct addr_line_share *s, size_t frame0);

/* Forget the previous line (its frames are gone). */
void addr_line_forget(struct addr_line *m);

void addr_line_free(struct addr_line *m);

#endif
