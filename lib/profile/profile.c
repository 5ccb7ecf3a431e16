/* profile.c - reads heap profiles (jemalloc heap_v2, jemalloc 3.x and
 * gperftools text heap profiles) into struct profile, unsampling every line
 * as jeprof does, in one pass over a buffer or over a file read in chunks.
 *
 * Speed matters (dumps of hundreds of MB): lines are found with memchr,
 * numbers are parsed by hand, and everything lands in a few arrays grown
 * geometrically; nothing is allocated per line except thread names.
 * The text is never assumed to be NUL-terminated: every read is bounded by
 * the end pointer, so binary garbage cannot take the parser out of bounds. */
#include "lib/profile/profile.h"
#include "lib/base/array.h"
#include "lib/base/u64map.h"
#include "lib/profile/addr_line.h"
#include "lib/profile/addr_tokens.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* jeprof's rate when a sampled profile does not say (or says 0). */
#define DEFAULT_RATE (128.0 * 1024)

enum sampling { SAMPLING_NONE, SAMPLING_V1, SAMPLING_V2 };

#define MEMO_BITS 8
struct unsampled {
    uint64_t n, s;
    double out_n, out_s;
};

struct line {
    const char *s, *e;  /* trimmed text of the line */
    bool complete;      /* ended with a newline (not cut off by EOF) */
};

/* The raw numbers of a "c: b [c: b]" group. */
struct counts {
    uint64_t n1, s1, n2, s2;
};

struct reader {
    const char *name;
    const char *p, *end;     /* text not yet read */
    size_t lineno;           /* number of the line last taken */
    struct mp_error *err;
    struct profile *prof;
    enum sampling sampling;
    double rate;
    struct unsampled memo[1 << MEMO_BITS];   /* see unsample_memo */
    struct counts last;      /* the counts unsample_counts saw last... */
    struct profile_values last_v;   /* ...and what they gave */
    bool last_ok;
    size_t cap_frames, cap_stacks, cap_samples, cap_threads;
    struct u64map addr_ids;  /* return address -> its index in prof->addrs */
    struct addr_tokens tokens;  /* address texts read -> the same index */
    struct addr_line line;   /* the previous "@" line, for what the next shares */
    size_t cap_addrs;
    uint32_t *slots;         /* thread id hash: index + 1, 0 = empty */
    size_t nslots;
    /* The stack being read (heap_v2): its first line and whether it has its
     * t* line; pending = the last line read belonged to it, so EOF now
     * would mean it may be missing lines. */
    bool in_stack, has_total, pending;
    bool cut_line;           /* the text ended inside a line (not at a newline) */
    size_t stack_line;
    const char *maps;        /* start of the MAPPED_LIBRARIES text, or NULL */
    /* Streaming from a file: text is read in chunks into buf, so a large
     * profile never sits in memory whole.  fd < 0: the text is all there. */
    int fd;
    char *buf;
    size_t bufcap;
    bool eof;
    int read_errno;          /* why reading stopped early (ENOMEM, EIO...), or 0 */
};

/* ---- unsampling (jeprof AdjustSamples) ---- */

void profile_unsample(double *n, double *s, uint64_t period)
{
    if (period == 0 || *n == 0)
        return;
    double ratio = (*s / *n) / (double)period;
    /* jeprof dies dividing by zero when s == 0; leave such a pair alone. */
    if (!(ratio > 0))
        return;
    double scale = 1 / (1 - exp(-ratio));
    *n *= scale;
    *s *= scale;
}

void profile_unsample_v1(double *n, double *s, double rate)
{
    if (!(rate > 0) || *n == 0)
        return;
    double ratio = (*s / *n) / rate;
    if (ratio > 0 && ratio < 1) {
        *n /= ratio;
        *s /= ratio;
    }
}

static void unsample_pair(const struct reader *r, double *n, double *s)
{
    /* Version 2 rates are whole numbers (the header's N, or 128 KiB). */
    if (r->sampling == SAMPLING_V2)
        profile_unsample(n, s, (uint64_t)r->rate);
    else if (r->sampling == SAMPLING_V1)
        profile_unsample_v1(n, s, r->rate);
}

/* (count, bytes) unsampled, remembered per pair for version 2: a profile
 * repeats a few pairs (each stack's t* line and its thread's, the same
 * size classes) and each new one costs an exp(). */
static void unsample_memo(struct reader *r, uint64_t n, uint64_t s, double *out_n, double *out_s)
{
    *out_n = (double)n;
    *out_s = (double)s;
    if (n == 0)
        return;                        /* no objects: nothing to scale */
    if (r->sampling != SAMPLING_V2) {
        unsample_pair(r, out_n, out_s);
        return;
    }
    struct unsampled *m = &r->memo[((n * 0x9e3779b97f4a7c15ull) ^ (s * 0xff51afd7ed558ccdull)) >>
                                   (64 - MEMO_BITS)];
    if (m->n == n && m->s == s) {      /* m->n == 0: empty */
        *out_n = m->out_n;
        *out_s = m->out_s;
        return;
    }
    unsample_pair(r, out_n, out_s);
    *m = (struct unsampled){n, s, *out_n, *out_s};
}

static struct profile_values unsample_counts(struct reader *r, const struct counts *c)
{
    /* A stack's thread line usually repeats its t* line's counts. */
    if (r->last_ok && c->n1 == r->last.n1 && c->s1 == r->last.s1 &&
        c->n2 == r->last.n2 && c->s2 == r->last.s2)
        return r->last_v;
    struct profile_values v;
    unsample_memo(r, c->n1, c->s1, &v.inuse_objects, &v.inuse_bytes);
    unsample_memo(r, c->n2, c->s2, &v.alloc_objects, &v.alloc_bytes);
    if (c->n2 || c->s2)
        r->prof->has_alloc = true;
    r->last = *c;
    r->last_v = v;
    r->last_ok = true;
    return v;
}

/* ---- lines and tokens ---- */

static const bool space_char[256] = {
    [' '] = true, ['\t'] = true, ['\r'] = true, ['\f'] = true, ['\v'] = true,
};

static bool is_space(char c)
{
    return space_char[(unsigned char)c];
}

#define STREAM_CHUNK (1u << 20)

/* Move the unread text to the front of buf and read more after it,
 * growing buf when one line fills it.  Returns false at EOF or error. */
static bool refill(struct reader *r)
{
    if (r->fd < 0 || r->eof)
        return false;
    size_t keep = (size_t)(r->end - r->p);
    if (keep + STREAM_CHUNK / 2 > r->bufcap) {
        size_t cap = r->bufcap ? r->bufcap * 2 : STREAM_CHUNK;
        char *nb = malloc(cap);
        if (!nb) {
            r->eof = true;
            r->read_errno = ENOMEM;
            return false;
        }
        memcpy(nb, r->p, keep);
        free(r->buf);
        r->buf = nb;
        r->bufcap = cap;
    } else {
        memmove(r->buf, r->p, keep);
    }
    r->p = r->buf;
    r->end = r->buf + keep;
    ssize_t n;
    do
        n = read(r->fd, r->buf + keep, r->bufcap - keep);
    while (n < 0 && errno == EINTR);
    if (n <= 0) {
        r->eof = true;
        if (n < 0)
            r->read_errno = errno;
        return false;
    }
    r->end += n;
    return true;
}

/* Read everything left (the MAPPED_LIBRARIES section) into buf. */
static void slurp_rest(struct reader *r)
{
    while (refill(r))
        ;
}

static bool next_line(struct reader *r, struct line *l)
{
    const char *nl;
    while (!(nl = memchr(r->p, '\n', (size_t)(r->end - r->p))) && refill(r))
        ;
    if (r->p >= r->end)
        return false;
    l->s = r->p;
    l->e = nl ? nl : r->end;
    l->complete = nl != NULL;
    r->p = nl ? nl + 1 : r->end;
    r->lineno++;
    while (l->s < l->e && is_space(*l->s))
        l->s++;
    while (l->e > l->s && is_space(l->e[-1]))
        l->e--;
    return true;
}

static void skip_spaces(const char **p, const char *end)
{
    while (*p < end && is_space(**p))
        (*p)++;
}

static bool starts_with(const char *s, const char *e, const char *prefix)
{
    size_t n = strlen(prefix);
    return (size_t)(e - s) >= n && memcmp(s, prefix, n) == 0;
}

/* A short printable quote of the text at s for error messages. */
static const char *quote(const char *s, const char *e, char *buf, size_t size)
{
    if (s >= e)
        return "the end of the line";
    size_t n = 0, max = size - 6;
    buf[n++] = '\'';
    for (; s < e && n < max; s++)
        buf[n++] = (*s >= 0x20 && *s < 0x7f) ? *s : '?';
    if (s < e) {
        memcpy(buf + n, "...", 3);
        n += 3;
    }
    buf[n++] = '\'';
    buf[n] = '\0';
    return buf;
}

static int fail(struct reader *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Set "FILE:LINE: message". */
static int fail(struct reader *r, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return mp_error_set(r->err, "%s:%zu: %s", r->name, r->lineno, msg);
}

static int oom(struct reader *r)
{
    return mp_error_set(r->err, "%s: out of memory reading the profile", r->name);
}

enum num_result { NUM_OK, NUM_NONE, NUM_OVERFLOW };

static enum num_result parse_decimal(const char **p, const char *end, uint64_t *out)
{
    const char *s = *p;
    uint64_t v = 0;
    /* 19 digits cannot overflow: check only beyond them */
    const char *safe = end - s > 19 ? s + 19 : end;
    for (; s < safe && (unsigned)(*s - '0') < 10; s++)
        v = v * 10 + (unsigned)(*s - '0');
    for (; s < end && *s >= '0' && *s <= '9'; s++) {
        unsigned d = (unsigned)(*s - '0');
        if (v > (UINT64_MAX - d) / 10)
            return NUM_OVERFLOW;
        v = v * 10 + d;
    }
    if (s == *p)
        return NUM_NONE;
    *p = s;
    *out = v;
    return NUM_OK;
}

static int number_failure(struct reader *r, enum num_result res, const char *p,
                          const char *end, const char *what)
{
    char q[40];
    if (res == NUM_OVERFLOW)
        return fail(r, "%s is too large (more than 2^64-1)", what);
    return fail(r, "expected %s, found %s", what, quote(p, end, q, sizeof q));
}

/* A decimal number; what names it for messages ("a count of objects"). */
static inline int expect_number(struct reader *r, const char **p, const char *end,
                                const char *what, uint64_t *out)
{
    skip_spaces(p, end);
    enum num_result res = parse_decimal(p, end, out);
    return res == NUM_OK ? 0 : number_failure(r, res, *p, end, what);
}

static int char_failure(struct reader *r, const char *p, const char *end, char c)
{
    char q[40];
    return fail(r, "expected '%c', found %s", c, quote(p, end, q, sizeof q));
}

static inline int expect_char(struct reader *r, const char **p, const char *end, char c)
{
    skip_spaces(p, end);
    if (*p < end && **p == c) {
        (*p)++;
        return 0;
    }
    return char_failure(r, *p, end, c);
}

/* "c: b [c: b]", spaces as jeprof allows them (and a few more). */
static int parse_counts(struct reader *r, const char **p, const char *end,
                        struct counts *c)
{
    if (expect_number(r, p, end, "a count of objects", &c->n1) ||
        expect_char(r, p, end, ':') ||
        expect_number(r, p, end, "a count of bytes", &c->s1) ||
        expect_char(r, p, end, '[') ||
        expect_number(r, p, end, "a cumulative count of objects", &c->n2) ||
        expect_char(r, p, end, ':') ||
        expect_number(r, p, end, "a cumulative count of bytes", &c->s2) ||
        expect_char(r, p, end, ']'))
        return -1;
    return 0;
}

/* ---- growing arrays ---- */

/* The new part of a big array will be written soon: fault its pages in
 * with one call rather than one trap per page (traps dominate the parse
 * time in VMs).  Harmless where the kernel lacks MADV_POPULATE_WRITE. */
static void prefault(char *start, size_t bytes)
{
#ifdef MADV_POPULATE_WRITE
    const uintptr_t page = 4096;
    if (bytes < 64 * page)
        return;
    uintptr_t lo = ((uintptr_t)start + page - 1) & ~(page - 1);
    uintptr_t hi = ((uintptr_t)start + bytes) & ~(page - 1);
    if (hi > lo)
        madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);
#else
    (void)start, (void)bytes;
#endif
}

static int grow(void **v, size_t *cap, size_t need, size_t elem, size_t first)
{
    if (need <= *cap)
        return 0;
    size_t old = *cap;
    if (array_reserve(v, cap, need, elem, first))
        return -1;
    prefault((char *)*v + old * elem, (*cap - old) * elem);
    return 0;
}

static struct profile_stack *push_stack(struct reader *r)
{
    struct profile *p = r->prof;
    if (p->nstacks >= UINT32_MAX) {
        fail(r, "too many stacks in one profile (more than 2^32)");
        return NULL;
    }
    if (p->nstacks == r->cap_stacks &&
        grow((void **)&p->stacks, &r->cap_stacks, p->nstacks + 1, sizeof *p->stacks, 1024)) {
        oom(r);
        return NULL;
    }
    struct profile_stack *st = &p->stacks[p->nstacks++];
    memset(st, 0, sizeof *st);
    st->frame0 = (uint32_t)p->nframes;
    st->sample0 = (uint32_t)p->nsamples;
    return st;
}

/* ---- threads ---- */

static size_t slot_of(uint64_t id, size_t nslots)
{
    return (size_t)((id * 0x9E3779B97F4A7C15ull) >> 17) & (nslots - 1);
}

static int rehash_threads(struct reader *r)
{
    size_t n = r->nslots ? r->nslots * 2 : 64;
    uint32_t *slots = calloc(n, sizeof *slots);
    if (!slots)
        return -1;
    for (size_t i = 0; i < r->prof->nthreads; i++) {
        size_t k = slot_of(r->prof->threads[i].id, n);
        while (slots[k])
            k = (k + 1) & (n - 1);
        slots[k] = (uint32_t)i + 1;
    }
    free(r->slots);
    r->slots = slots;
    r->nslots = n;
    return 0;
}

/* Index of thread id, added (without a name) when new; -1 on error. */
static long thread_index(struct reader *r, uint64_t id)
{
    struct profile *p = r->prof;
    if (r->nslots) {
        for (size_t k = slot_of(id, r->nslots); r->slots[k]; k = (k + 1) & (r->nslots - 1))
            if (p->threads[r->slots[k] - 1].id == id)
                return (long)r->slots[k] - 1;
    }
    if (p->nthreads >= UINT32_MAX - 1)
        return fail(r, "too many threads in one profile");
    if (grow((void **)&p->threads, &r->cap_threads, p->nthreads + 1, sizeof *p->threads, 16))
        return oom(r);
    struct profile_thread *t = &p->threads[p->nthreads++];
    memset(t, 0, sizeof *t);
    t->id = id;
    if (p->nthreads * 2 > r->nslots) {
        if (rehash_threads(r))
            return oom(r);
    } else {
        size_t k = slot_of(id, r->nslots);
        while (r->slots[k])
            k = (k + 1) & (r->nslots - 1);
        r->slots[k] = (uint32_t)p->nthreads;
    }
    return (long)p->nthreads - 1;
}

/* ---- addresses ---- */

/* Hex digit value + 1, 0 for anything else: one load per character in the
 * loop that reads most of the file. */
static const unsigned char hex_plus1[256] = {
    ['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5, ['5'] = 6, ['6'] = 7,
    ['7'] = 8, ['8'] = 9, ['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13,
    ['d'] = 14, ['e'] = 15, ['f'] = 16, ['A'] = 11, ['B'] = 12, ['C'] = 13,
    ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

/* More than 16 hex digits once leading zeros are set aside. */
static bool hex_too_long(const char *d, const char *e)
{
    while (d < e && *d == '0')
        d++;
    return e - d > 16;
}

/* Room for every address an "@" line of n characters can hold. */
static int reserve_frames(struct reader *r, size_t n)
{
    struct profile *p = r->prof;
    size_t most = n / 2 + 1;
    if (most > UINT32_MAX - p->nframes)
        most = UINT32_MAX - p->nframes;
    if (grow((void **)&p->frames, &r->cap_frames, p->nframes + most, sizeof *p->frames, 4096))
        return oom(r);
    return 0;
}

/* The index of addr in prof->addrs, added when first seen; -1 when out
 * of memory. */
static int64_t addr_index(struct reader *r, uint64_t addr)
{
    struct profile *p = r->prof;
    uint32_t *id = u64map_slot(&r->addr_ids, addr);
    if (!id)
        return -1;
    if (*id != U64MAP_NEW)
        return *id;
    if (grow((void **)&p->addrs, &r->cap_addrs, p->naddrs + 1, sizeof *p->addrs, 1024))
        return -1;
    p->addrs[p->naddrs] = addr;
    *id = (uint32_t)p->naddrs;
    return (int64_t)p->naddrs++;
}

/* One address token read the careful way at *p (up to end): its index
 * in prof->addrs, remembered by its text for the next time; *p moves past
 * it.  -1 with the error set. */
static int64_t read_address(struct reader *r, const char **pp, const char *end)
{
    char q[40];
    const char *p = *pp, *tok = p;
    if (end - p > 2 && p[0] == '0' && (p[1] | 0x20) == 'x' && hex_plus1[(unsigned char)p[2]])
        p += 2;
    const char *digits = p;
    uint64_t v = 0;
    unsigned h;
    while (p < end && (h = hex_plus1[(unsigned char)*p]) != 0) {
        v = v << 4 | (h - 1);
        p++;
    }
    if (p == digits || (p < end && !is_space(*p)))
        return fail(r, "expected a hexadecimal return address, found %s",
                    quote(tok, end, q, sizeof q));
    if (p - digits > 16 && hex_too_long(digits, p))
        return fail(r, "return address %s is longer than 64 bits",
                    quote(tok, p, q, sizeof q));
    int64_t id = addr_index(r, v);
    if (id < 0)
        return oom(r);
    addr_tokens_add(&r->tokens, tok, (size_t)(p - tok), (uint32_t)id);
    *pp = p;
    return id;
}

/* The address tokens in p[0..end), appended to prof->frames at *n (with
 * room for them); their offsets from line go to r->line when record. */
static int read_tokens(struct reader *r, const char *line, const char *p, const char *end,
                       size_t *n, bool record)
{
    uint32_t *frames = r->prof->frames;
    for (;;) {
        while (p < end && is_space(*p))
            p++;
        if (p >= end)
            return 0;
        if (*n >= UINT32_MAX)
            return fail(r, "too many frames in one profile (more than 2^32)");
        const char *tok = p;
        size_t len;
        uint32_t known;
        if (addr_tokens_find(&r->tokens, p, r->end, &len, &known) && len <= (size_t)(end - p) &&
            (p + len == end || is_space(p[len]))) {
            frames[(*n)++] = known;
            p += len;
        } else {
            int64_t id = read_address(r, &p, end);
            if (id < 0)
                return -1;
            frames[(*n)++] = (uint32_t)id;
        }
        if (record)
            addr_line_token(&r->line, (size_t)(tok - line), (size_t)(p - line));
        p += p < end;                     /* the space after it */
    }
}

/* The addresses of an "@ ..." list, appended to prof->frames.  jemalloc
 * writes "0x..." (and "0" for a null frame); bare hex is accepted too.
 * The first and last tokens the line shares with the previous "@" line
 * are that line's frames (addr_line.h); a token seen before is known by
 * its text (addr_tokens.h); the 16 bytes that takes may run past the
 * line, never past the text read. */
static int parse_addresses(struct reader *r, const char *p, const char *end)
{
    if (reserve_frames(r, (size_t)(end - p)))
        return -1;
    struct addr_line *m = &r->line;
    size_t n = r->prof->nframes, len = (size_t)(end - p);
    if (m->valid && m->frame0 + m->ntokens != n)
        addr_line_forget(m);              /* its frames are not the last ones */
    struct addr_line_share sh = addr_line_compare(m, p, len);
    if (n + sh.head + sh.tail >= UINT32_MAX)
        sh = (struct addr_line_share){0, 0, 0, len};
    size_t prev0 = m->frame0, prevn = m->ntokens;
    bool record = addr_line_begin(m, len, &sh) == 0;
    uint32_t *frames = r->prof->frames;
    memcpy(frames + n, frames + prev0, sh.head * sizeof *frames);
    n += sh.head;
    if (read_tokens(r, p, p + sh.mid_s, p + sh.mid_e, &n, record)) {
        addr_line_forget(m);
        return -1;
    }
    if (sh.tail > UINT32_MAX - n) {       /* reserve_frames made room for 2^32 at most */
        addr_line_forget(m);
        return fail(r, "too many frames in one profile (more than 2^32)");
    }
    memcpy(frames + n, frames + prev0 + prevn - sh.tail, sh.tail * sizeof *frames);
    n += sh.tail;
    if (record)
        addr_line_end(m, p, len, &sh, r->prof->nframes);
    r->prof->nframes = n;
    return 0;
}

/* ---- heap_v2 ---- */

static int parse_v2_header(struct reader *r, const struct line *l)
{
    const char *p = l->s + strlen("heap_v2/");
    uint64_t n;
    char q[40];
    switch (parse_decimal(&p, l->e, &n)) {
    case NUM_OVERFLOW:
        return fail(r, "the sampling period after 'heap_v2/' is too large");
    case NUM_NONE:
        return fail(r, "expected the sampling period after 'heap_v2/' (as in heap_v2/524288), found %s",
                    quote(p, l->e, q, sizeof q));
    default:
        break;
    }
    skip_spaces(&p, l->e);
    if (p != l->e)
        return fail(r, "unexpected %s after the sampling period", quote(p, l->e, q, sizeof q));
    r->prof->format = PROFILE_HEAP_V2;
    r->prof->header_period = n;
    r->prof->period = n;
    r->rate = (double)n;
    /* jeprof: a period of 0 means no adjustment for threaded profiles. */
    r->sampling = n ? SAMPLING_V2 : SAMPLING_NONE;
    return 0;
}

/* Close the stack being read: it must have had its t* line. */
static int end_stack(struct reader *r)
{
    if (r->in_stack && !r->has_total) {
        size_t here = r->lineno;
        r->lineno = r->stack_line;
        fail(r, "this stack has no 't*:' line (found the next section at line %zu)", here);
        r->lineno = here;
        return -1;
    }
    r->in_stack = false;
    r->pending = false;
    return 0;
}

static int begin_v2_stack(struct reader *r, const struct line *l)
{
    if (end_stack(r))
        return -1;
    if (!push_stack(r))
        return -1;
    if (parse_addresses(r, l->s + 1, l->e))
        return -1;
    struct profile_stack *st = &r->prof->stacks[r->prof->nstacks - 1];
    st->nframes = (uint32_t)(r->prof->nframes - st->frame0);
    r->in_stack = true;
    r->has_total = false;
    r->pending = true;
    r->stack_line = r->lineno;
    return 0;
}

static char *copy_name(const char *s, const char *e)
{
    char *name = malloc((size_t)(e - s) + 1);
    if (name) {
        memcpy(name, s, (size_t)(e - s));
        name[e - s] = '\0';
    }
    return name;
}

/* A header thread line "tN: c: b [c: b] name with spaces". */
static int header_thread(struct reader *r, uint64_t id, const struct counts *c,
                         const char *rest, const char *end)
{
    long i = thread_index(r, id);
    if (i < 0)
        return -1;
    struct profile_thread *t = &r->prof->threads[i];
    t->header = unsample_counts(r, c);
    skip_spaces(&rest, end);
    if (rest < end && !t->name) {
        t->name = copy_name(rest, end);
        if (!t->name)
            return oom(r);
    }
    return 0;
}

static int stack_thread(struct reader *r, uint64_t id, const struct counts *c)
{
    struct profile *p = r->prof;
    long i = thread_index(r, id);
    if (i < 0)
        return -1;
    if (p->nsamples >= UINT32_MAX)
        return fail(r, "too many thread lines in one profile (more than 2^32)");
    if (grow((void **)&p->samples, &r->cap_samples, p->nsamples + 1, sizeof *p->samples, 1024))
        return oom(r);
    struct profile_thread_sample *ts = &p->samples[p->nsamples++];
    ts->thread = (uint32_t)i;
    ts->v = unsample_counts(r, c);
    p->stacks[p->nstacks - 1].nsamples++;
    return 0;
}

static int stack_total(struct reader *r, const struct counts *c)
{
    if (r->has_total)
        return fail(r, "a second 't*:' line for the stack at line %zu", r->stack_line);
    struct profile_stack *st = &r->prof->stacks[r->prof->nstacks - 1];
    st->v = unsample_counts(r, c);
    r->has_total = true;
    return 0;
}

/* "t*: ..." or "tN: ...", in the header or inside a stack. */
static int v2_thread_line(struct reader *r, const struct line *l)
{
    const char *p = l->s + 1, *e = l->e;
    bool star = p < e && *p == '*';
    uint64_t id = 0;
    char q[40];
    if (star) {
        p++;
    } else if (parse_decimal(&p, e, &id) != NUM_OK) {
        return fail(r, "expected 't*:' or 't<thread id>:', found %s", quote(l->s, e, q, sizeof q));
    }
    struct counts c;
    if (expect_char(r, &p, e, ':') || parse_counts(r, &p, e, &c))
        return -1;
    skip_spaces(&p, e);
    if (r->prof->nstacks == 0) {
        if (star) {
            if (p < e)
                return fail(r, "unexpected %s after ']'", quote(p, e, q, sizeof q));
            r->prof->header_total = unsample_counts(r, &c);
            return 0;
        }
        return header_thread(r, id, &c, p, e);
    }
    if (p < e)
        return fail(r, "unexpected %s after ']' (thread names belong in the header only)",
                    quote(p, e, q, sizeof q));
    r->pending = true;
    return star ? stack_total(r, &c) : stack_thread(r, id, &c);
}

static bool is_maps_marker(const struct line *l)
{
    return starts_with(l->s, l->e, "MAPPED_LIBRARIES:") ||
           starts_with(l->s, l->e, "--- Memory map:");
}

/* The longest line quick_thread_line reads: 8 spaces, "t", 4 numbers of
 * 19 digits and an id of 19, ": " " [" ": " "]" and the newline. */
#define QUICK_LINE_MAX 128

/* The 1 to 19 digits at s (no overflow possible), or NULL.  Unbounded:
 * the caller knows a non-digit comes within 20 bytes. */
static inline const char *quick_number(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    unsigned d, n = 0;
    while ((d = (unsigned)(*s - '0')) < 10) {
        if (++n > 19)
            return NULL;
        v = v * 10 + d;
        s++;
    }
    *out = v;
    return n ? s : NULL;
}

/* ": " then a number, or NULL. */
static inline const char *quick_colon_number(const char *s, uint64_t *out)
{
    return s[0] == ':' && s[1] == ' ' ? quick_number(s + 2, out) : NULL;
}

/* A stack's thread line exactly as jemalloc writes it ("  t*: c: b [c: b]"
 * or "  tN: ..." and a newline), read with one test per character and
 * without looking for its end first; only where QUICK_LINE_MAX bytes are
 * there to read, so nothing needs bounds.  1 when taken, 0 when it is not
 * such a line (next_line and v2_thread_line read it then, and explain any
 * error), -1 with the error set. */
static int quick_thread_line(struct reader *r)
{
    const char *p = r->p;
    if (r->end - p < QUICK_LINE_MAX || r->prof->nstacks == 0)
        return 0;
    for (int spaces = 0; *p == ' '; p++)
        if (++spaces > 8)
            return 0;
    if (*p++ != 't')
        return 0;
    uint64_t id = 0;
    bool star = *p == '*';
    if (star)
        p++;
    else if (!(p = quick_number(p, &id)))
        return 0;
    struct counts c;
    if (!(p = quick_colon_number(p, &c.n1)) || !(p = quick_colon_number(p, &c.s1)) ||
        p[0] != ' ' || p[1] != '[' || !(p = quick_number(p + 2, &c.n2)) ||
        !(p = quick_colon_number(p, &c.s2)) || p[0] != ']' || p[1] != '\n')
        return 0;
    r->p = p + 2;
    r->lineno++;
    r->pending = true;
    if (star)
        return stack_total(r, &c) ? -1 : 1;
    return stack_thread(r, id, &c) ? -1 : 1;
}

static int read_v2_body(struct reader *r)
{
    struct line l;
    char q[40];
    for (;;) {
        int quick = quick_thread_line(r);
        if (quick < 0)
            return -1;
        if (quick)
            continue;
        if (!next_line(r, &l))
            break;
        if (is_maps_marker(&l)) {
            slurp_rest(r);
            r->maps = r->p;
            return end_stack(r);
        }
        if (l.s == l.e) {
            r->pending = false;   /* a blank line: the stack is whole */
            continue;
        }
        if (!l.complete) {
            /* Cut off by EOF: an "@" proves the previous stack whole. */
            if (*l.s == '@')
                r->pending = false;
            r->cut_line = true;
            break;
        }
        if (*l.s == '@') {
            if (begin_v2_stack(r, &l))
                return -1;
        } else if (*l.s == 't') {
            if (v2_thread_line(r, &l))
                return -1;
        } else {
            return fail(r, "expected '@ <addresses>', a 't*:' or 't<thread>:' line, or "
                        "'MAPPED_LIBRARIES:', found %s", quote(l.s, l.e, q, sizeof q));
        }
    }
    return 0;
}

/* ---- "heap profile:" (jemalloc 3.x, gperftools) ---- */

/* The type after '@' (up to '/' as jeprof reads it), and the period. */
static int legacy_type(struct reader *r, const char *p, const char *e,
                       const struct counts *c)
{
    struct profile *prof = r->prof;
    char q[40];
    const char *type = p, *slash = p < e ? memchr(p, '/', (size_t)(e - p)) : NULL;
    const char *type_end = slash ? slash : e;
    bool has_period = false;
    uint64_t n = 0;
    if (slash) {
        const char *d = slash + 1;
        enum num_result res = parse_decimal(&d, e, &n);
        if (res == NUM_OVERFLOW)
            return fail(r, "the sampling period after '/' is too large");
        if (res == NUM_NONE || d != e)
            return fail(r, "expected a sampling period after '/', found %s",
                        quote(slash + 1, e, q, sizeof q));
        has_period = true;
    }
    while (type_end > type && is_space(type_end[-1]))
        type_end--;
    size_t tlen = (size_t)(type_end - type);
    bool heap = memmem(type, tlen, "heap", 4) != NULL;
    prof->header_period = n;
    prof->page_faults = tlen == 11 && memcmp(type, "page_faults", 11) == 0;
    if (tlen == 0) {
        /* No type: jeprof takes equal in-use and total pairs as an old
         * remote heap profile (version 1 sampling). */
        bool v1 = c->n1 == c->n2 && c->s1 == c->s2;
        prof->format = v1 ? PROFILE_HEAP_SAMPLED : PROFILE_HEAPPROFILE;
        r->sampling = v1 ? SAMPLING_V1 : SAMPLING_NONE;
        r->rate = v1 ? DEFAULT_RATE : 0;
    } else if (!heap || (tlen == 11 && memcmp(type, "heapprofile", 11) == 0)) {
        /* heapprofile, growth and anything without "heap": not sampled. */
        prof->format = PROFILE_HEAPPROFILE;
        r->sampling = SAMPLING_NONE;
        r->rate = 0;
    } else if (memmem(type, tlen, "_v2", 3)) {
        prof->format = PROFILE_HEAP_V2_LEGACY;
        r->sampling = SAMPLING_V2;
        r->rate = has_period && n ? (double)n : DEFAULT_RATE;
    } else {
        /* Old tcmalloc printed twice the mean sampling interval. */
        prof->format = PROFILE_HEAP_SAMPLED;
        r->sampling = SAMPLING_V1;
        r->rate = has_period && n ? (double)n / 2 : DEFAULT_RATE;
    }
    prof->sample_rate = r->rate;
    prof->period = (uint64_t)r->rate;
    return 0;
}

/* Length of the "FILE:LINE: " fail() puts in front of a message. */
static size_t prefix_len(const struct reader *r)
{
    int n = snprintf(NULL, 0, "%s:%zu: ", r->name, r->lineno);
    return n > 0 && (size_t)n < sizeof r->err->msg ? (size_t)n : 0;
}

static int parse_legacy_header(struct reader *r, const struct line *l)
{
    const char *p = l->s + strlen("heap profile:"), *e = l->e;
    struct counts c;
    char q[40];
    struct mp_error detail;
    struct reader quiet = *r;
    quiet.err = &detail;
    if (parse_counts(&quiet, &p, e, &c))
        return fail(r, "expected 'heap profile: <objects>: <bytes> [<objects>: <bytes>] "
                    "@ <type>/<period>' (%s)", detail.msg + prefix_len(r));
    skip_spaces(&p, e);
    if (p < e && *p != '@')
        return fail(r, "expected '@ <type>' after the totals, found %s", quote(p, e, q, sizeof q));
    if (p < e)
        p++;
    skip_spaces(&p, e);
    if (legacy_type(r, p, e, &c))
        return -1;
    r->prof->header_total = unsample_counts(r, &c);
    return 0;
}

/* "c: b [c: b] @ 0x... 0x..." */
static int legacy_stack(struct reader *r, const struct line *l)
{
    const char *p = l->s;
    struct counts c;
    struct profile_stack *st = push_stack(r);
    if (!st)
        return -1;
    if (parse_counts(r, &p, l->e, &c) || expect_char(r, &p, l->e, '@'))
        return -1;
    if (parse_addresses(r, p, l->e))
        return -1;
    st = &r->prof->stacks[r->prof->nstacks - 1];
    st->nframes = (uint32_t)(r->prof->nframes - st->frame0);
    st->v = unsample_counts(r, &c);
    return 0;
}

static int read_legacy_body(struct reader *r)
{
    struct line l;
    while (next_line(r, &l)) {
        if (is_maps_marker(&l)) {
            slurp_rest(r);
            r->maps = r->p;
            return 0;
        }
        if (l.s == l.e)
            continue;
        if (!l.complete) {
            r->cut_line = true;   /* cut off by EOF: the line may be partial */
            break;
        }
        if (legacy_stack(r, &l))
            return -1;
    }
    return 0;
}

/* ---- detection ---- */

static int not_a_profile(struct reader *r, const char *why)
{
    return mp_error_set(r->err, "%s: not a heap profile: %s", r->name, why);
}

static bool is_prefix_of(const char *data, size_t len, const char *magic)
{
    size_t n = strlen(magic);
    return memcmp(data, magic, len < n ? len : n) == 0;
}

/* Why the text at data (the first chunk: a file's first MiB, or all of a
 * buffer) is no heap profile.  Decided before any line is taken, so a
 * binary file's megabytes-long "first line" is never read whole. */
static int detect_failure(struct reader *r, const char *data, size_t len)
{
    const unsigned char *u = (const unsigned char *)data;
    const char *e = memchr(data, '\n', len);
    if (!e)
        e = data + len;
    if (len >= 2 && u[0] == 0x1f && u[1] == 0x8b)
        return not_a_profile(r, "it is gzip-compressed, probably a pprof protobuf profile "
                             "(memprof reads jemalloc's text heap dumps; use jeprof or "
                             "pprof for this one)");
    if (len >= 3 && u[0] == 0x0a && u[2] == 0x08)
        return not_a_profile(r, "it looks like an uncompressed pprof protobuf profile "
                             "(memprof reads jemalloc's text heap dumps)");
    if (starts_with(data, e, "--- symbol"))
        return not_a_profile(r, "it is a symbolized pprof profile, which memprof does not read");
    if (starts_with(data, e, "---") || (len >= 8 && memcmp(data, "\0\0\0\0", 4) == 0))
        return not_a_profile(r, "it looks like a gperftools CPU or contention profile");
    if (memchr(data, '\0', (size_t)(e - data)))
        return not_a_profile(r, "its first line holds binary data");
    char q[40];
    return mp_error_set(r->err, "%s:1: not a heap profile: the first line should start with "
                        "'heap_v2/' (jemalloc) or 'heap profile:' (jemalloc 3.x, gperftools), "
                        "found %s", r->name, quote(data, e, q, sizeof q));
}

static int read_profile(struct reader *r, const char *data, size_t len)
{
    if (len == 0)
        return mp_error_set(r->err, "%s: the file is empty, not a heap profile", r->name);
    size_t lead = 0;        /* spaces next_line trims */
    while (lead < len && is_space(data[lead]))
        lead++;
    if (lead == len || (!is_prefix_of(data + lead, len - lead, "heap_v2/") &&
                        !is_prefix_of(data + lead, len - lead, "heap profile:")))
        return detect_failure(r, data + lead, len - lead);
    struct line l;
    if (!next_line(r, &l))
        return mp_error_set(r->err, "%s: the file is empty, not a heap profile", r->name);
    bool v2 = starts_with(l.s, l.e, "heap_v2/");
    bool legacy = starts_with(l.s, l.e, "heap profile:");
    if (!v2 && !legacy)     /* a file shorter than the magic: l is all of it */
        return detect_failure(r, l.s, (size_t)(l.e - l.s));
    if (!l.complete)
        return fail(r, "the file ends inside the header line (truncated?)");
    if (v2) {
        if (parse_v2_header(r, &l))
            return -1;
        r->prof->sample_rate = r->rate;
        return read_v2_body(r);
    }
    if (parse_legacy_header(r, &l))
        return -1;
    return read_legacy_body(r);
}

/* ---- after the stacks ---- */

/* Whether the text ended whole after its stacks, only without the maps:
 * on a newline, after a last stack with its t* line and a thread line.
 * jemalloc and gperftools write MAPPED_LIBRARIES from /proc/self/maps and
 * leave it out, ending the file there, where they cannot open it (a
 * daemon chroot()ed without /proc). */
static bool ended_whole(const struct reader *r)
{
    const struct profile *p = r->prof;
    if (r->cut_line)
        return false;
    return !(r->in_stack && r->pending) ||
           (r->has_total && p->nstacks && p->stacks[p->nstacks - 1].nsamples > 0);
}

static void note_truncation(struct reader *r)
{
    struct profile *p = r->prof;
    if (ended_whole(r)) {
        p->no_maps_section = true;
        snprintf(p->warning, sizeof p->warning,
                 "%s: no MAPPED_LIBRARIES section after its last stack (the file ends "
                 "whole there); kept all %zu stacks. jemalloc leaves that list of the "
                 "process's mappings out where it cannot read /proc/self/maps (a daemon "
                 "chroot()ed without /proc), and without it no address can be placed in "
                 "an object, so frames cannot be named. A dump memprof takes from the "
                 "live process gets the process's maps, read on the host", r->name,
                 p->nstacks);
        return;
    }
    p->truncated = true;
    if (r->in_stack && r->pending) {
        /* The last stack may be missing lines: drop it whole. */
        struct profile_stack *st = &p->stacks[--p->nstacks];
        p->nframes = st->frame0;
        p->nsamples = st->sample0;
        snprintf(p->warning, sizeof p->warning,
                 "%s:%zu: the file ends inside a stack (truncated?); dropped it, kept %zu whole stacks",
                 r->name, r->stack_line, p->nstacks);
    } else {
        snprintf(p->warning, sizeof p->warning,
                 "%s: the file ends before MAPPED_LIBRARIES (truncated?); kept %zu stacks, "
                 "addresses cannot be placed in libraries", r->name, p->nstacks);
    }
}

static void sum_totals(struct profile *p)
{
    struct profile_values t = {0, 0, 0, 0};
    for (size_t i = 0; i < p->nstacks; i++) {
        t.inuse_objects += p->stacks[i].v.inuse_objects;
        t.inuse_bytes += p->stacks[i].v.inuse_bytes;
        t.alloc_objects += p->stacks[i].v.alloc_objects;
        t.alloc_bytes += p->stacks[i].v.alloc_bytes;
    }
    p->total = t;
}

static int finish(struct reader *r)
{
    struct profile *p = r->prof;
    if (r->maps) {
        struct mp_error merr;
        if (maps_parse(r->maps, (size_t)(r->end - r->maps), false, &p->maps, &merr))
            return mp_error_set(r->err, "%s: MAPPED_LIBRARIES: %s", r->name, merr.msg);
    } else {
        note_truncation(r);
    }
    sum_totals(p);
    return 0;
}

/* Parse what r reads (a buffer, or a file in chunks) into a new profile. */
static struct profile *parse_with(struct reader *r, const char *name, struct mp_error *err)
{
    struct profile *p = calloc(1, sizeof *p);
    if (!p || !(p->name = strdup(name ? name : "profile"))) {
        free(p);
        mp_error_set(err, "%s: out of memory reading the profile", name ? name : "profile");
        return NULL;
    }
    r->name = p->name;
    r->err = err;
    r->prof = p;
    if (r->fd >= 0)
        refill(r);           /* the first chunk, for format detection */
    int rc = read_profile(r, r->p, (size_t)(r->end - r->p));
    if (r->read_errno)      /* not the end of the file: never take it for a truncation */
        rc = mp_error_set(err, "%s: cannot read it: %s", p->name, strerror(r->read_errno));
    else if (rc == 0)
        rc = finish(r);
    free(r->slots);
    u64map_free(&r->addr_ids);
    addr_tokens_free(&r->tokens);
    addr_line_free(&r->line);
    if (rc) {
        profile_free(p);
        return NULL;
    }
    return p;
}

struct profile *profile_parse(const char *data, size_t len, const char *name,
                              struct mp_error *err)
{
    struct reader r = {.p = data, .end = data + len, .fd = -1, .eof = true};
    return parse_with(&r, name, err);
}

/* ---- files ---- */

static const char *file_kind(mode_t m)
{
    if (S_ISDIR(m)) return "a directory";
    if (S_ISFIFO(m)) return "a FIFO";
    if (S_ISSOCK(m)) return "a socket";
    if (S_ISCHR(m)) return "a character device";
    if (S_ISBLK(m)) return "a block device";
    return "not a regular file";
}

/* ---- build-ids kept beside a dump ---- */

#define OBJECT_IDS_MAX_BYTES (1 << 20)   /* a sidecar is a few KiB; more is not ours */

int profile_add_object_id(struct profile *p, const char *path, const char *build_id)
{
    if (profile_object_id(p, path))
        return 0;
    struct profile_object_id *v = realloc(p->object_ids, (p->nobject_ids + 1) * sizeof *v);
    if (!v)
        return -1;
    p->object_ids = v;
    struct profile_object_id *o = &v[p->nobject_ids];
    o->path = strdup(path);
    o->build_id = strdup(build_id);
    if (!o->path || !o->build_id) {
        free(o->path);
        free(o->build_id);
        return -1;
    }
    p->nobject_ids++;
    return 0;
}

const char *profile_object_id(const struct profile *p, const char *path)
{
    for (size_t i = 0; i < p->nobject_ids; i++)
        if (strcmp(p->object_ids[i].path, path) == 0)
            return p->object_ids[i].build_id;
    return NULL;
}

char *profile_object_ids_path(const char *dump_path)
{
    char *out = NULL;
    return asprintf(&out, "%s.buildids", dump_path) < 0 ? NULL : out;
}

int profile_save_object_ids(const struct profile *p, const char *dump_path,
                            struct mp_error *err)
{
    char *path = profile_object_ids_path(dump_path);
    FILE *f = path ? fopen(path, "we") : NULL;
    if (!f) {
        mp_error_set(err, "cannot create %s: %s", path ? path : "the build-id file",
                     path ? strerror(errno) : "out of memory");
        free(path);
        return -1;
    }
    fprintf(f, "# memprof: build-ids of the objects mapped when %s was taken\n"
               "# (read by memprof to tell objects rebuilt since; jeprof ignores it)\n",
            dump_path);
    for (size_t i = 0; i < p->nobject_ids; i++)
        fprintf(f, "%s %s\n", p->object_ids[i].build_id, p->object_ids[i].path);
    int rc = 0;
    if (ferror(f) | fclose(f))
        rc = mp_error_set(err, "cannot write %s: %s", path, strerror(errno));
    free(path);
    return rc;
}

static bool is_hex_id(const char *s, size_t len)
{
    if (len == 0 || len > 128 || len % 2)
        return false;
    for (size_t i = 0; i < len; i++)
        if (!strchr("0123456789abcdef", s[i]) || !s[i])
            return false;
    return true;
}

/* Reads FILE.buildids when there is one; a missing or unreadable file
 * leaves the profile without build-ids (nothing to check against). */
static void load_object_ids(struct profile *p, const char *dump_path)
{
    char *path = profile_object_ids_path(dump_path);
    int fd = path ? open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY) : -1;
    free(path);
    struct stat st;
    if (fd < 0)
        return;
    char *text = NULL;
    if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_size < OBJECT_IDS_MAX_BYTES &&
        (text = malloc((size_t)st.st_size + 1))) {
        ssize_t n = read(fd, text, (size_t)st.st_size);
        text[n > 0 ? n : 0] = '\0';
    }
    close(fd);
    for (char *line = text, *next; line && *line; line = next) {
        char *nl = strchr(line, '\n');
        next = nl ? nl + 1 : line + strlen(line);
        if (nl)
            *nl = '\0';
        char *space = strchr(line, ' ');
        if (line[0] == '#' || !space || !is_hex_id(line, (size_t)(space - line)) ||
            space[1] != '/')
            continue;
        *space = '\0';
        if (profile_add_object_id(p, space + 1, line))
            break;
    }
    free(text);
}

/* The directory of a dump that has a directory of kept objects beside it
 * (memprof's 'profile save' wrote both), malloc'd, or NULL.  What is in it
 * is only ever used after its build-id is checked. */
static char *kept_dir_of(const char *dump_path)
{
    const char *slash = strrchr(dump_path, '/');
    char *dir = slash ? strndup(dump_path, (size_t)(slash - dump_path + (slash == dump_path)))
                      : strdup(".");
    char *kept = NULL;
    struct stat st;
    if (dir && asprintf(&kept, "%s/" PROFILE_KEPT_SUBDIR, dir) >= 0 &&
        lstat(kept, &st) == 0 && S_ISDIR(st.st_mode)) {
        free(kept);
        return dir;
    }
    free(kept);
    free(dir);
    return NULL;
}

struct profile *profile_load_file(const char *path, struct mp_error *err)
{
    struct stat st;
    if (stat(path, &st)) {
        mp_error_set(err, "%s: cannot read: %s", path, strerror(errno));
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        mp_error_set(err, "%s: is %s, not a heap profile file", path, file_kind(st.st_mode));
        return NULL;
    }
    /* O_NONBLOCK: if the path was swapped for a FIFO since stat, do not hang. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0 || fstat(fd, &st)) {
        mp_error_set(err, "%s: cannot read: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    if (!S_ISREG(st.st_mode) || st.st_size == 0) {
        close(fd);
        if (S_ISREG(st.st_mode))
            mp_error_set(err, "%s: the file is empty, not a heap profile", path);
        else
            mp_error_set(err, "%s: is %s, not a heap profile file", path, file_kind(st.st_mode));
        return NULL;
    }
    /* Read in chunks, not mmap: a dump that jemalloc rewrites (the same
     * name again, opened with O_TRUNC) while we parse would turn a mapping
     * into SIGBUS, and a mapped file would sit in memory whole. */
    struct reader r = {.fd = fd};
    r.p = r.end = "";
    struct profile *p = parse_with(&r, path, err);
    free(r.buf);
    close(fd);
    if (p) {
        p->taken_at = st.st_mtim.tv_sec;
        load_object_ids(p, path);
        if (p->nobject_ids)
            p->kept_dir = kept_dir_of(path);
    }
    return p;
}

void profile_free(struct profile *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->nthreads; i++)
        free(p->threads[i].name);
    free(p->threads);
    free(p->frames);
    free(p->addrs);
    free(p->stacks);
    free(p->samples);
    maps_free(&p->maps);
    for (size_t i = 0; i < p->nobject_ids; i++) {
        free(p->object_ids[i].path);
        free(p->object_ids[i].build_id);
    }
    free(p->object_ids);
    free(p->kept_dir);
    free(p->name);
    free(p);
}
