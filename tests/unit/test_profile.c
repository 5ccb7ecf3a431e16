/* test_profile.c - the heap profile reader (lib/profile/profile.c): every format,
 * the unsampling math, truncated files and each error message.
 *
 * Expected numbers come from hand calculation or from perl evaluating
 * jeprof's AdjustSamples formula, never from running the reader. */
#include "tests/unit/unit.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "lib/profile/profile.h"
#include "lib/profile/profile_delta.h"

static struct mp_error err;

static struct profile *parse(const char *text)
{
    memset(&err, 0, sizeof err);
    return profile_parse(text, strlen(text), "t.heap", &err);
}

/* The text must not parse, and the message must hold want. */
static void parse_fails(const char *text, const char *want)
{
    struct profile *p = parse(text);
    ck_assert_msg(p == NULL, "parsed, expected an error with \"%s\"", want);
    ck_assert_msg(strstr(err.msg, want) != NULL, "message \"%s\" lacks \"%s\"", err.msg, want);
}

static const char *data_file(const char *name)
{
    static char path[512];
    snprintf(path, sizeof path, "tests/unit/data/%s", name);
    return path;
}

#define MAPS "MAPPED_LIBRARIES:\n" \
    "55cd86892000-55cd86893000 r-xp 00001000 fe:00 10952930   /usr/bin/prog\n"

/* ---- unsampling ---- */

/* The stack's in-use values are the written pair (n, s), unsampled. */
static void assert_inuse(const struct profile_values *v, double n, double s, uint64_t period)
{
    profile_unsample(&n, &s, period);
    ck_assert_double_eq_tol(v->inuse_objects, n, 1e-9 * n);
    ck_assert_double_eq_tol(v->inuse_bytes, s, 1e-9 * s);
}

START_TEST(unsample_matches_hand_and_perl)
{
    /* R = 524288, one 1024-byte object: x = 1024/524288 = 1/512.
     * 1/(1-e^-x) = (1/x)(1 + x/2 + x^2/12 + ...) = 512 * (1 + 1/1024 + ~3.2e-7)
     * = 512.50016...; perl with jeprof's formula prints 512.50016276041993. */
    double n = 1, s = 1024;
    profile_unsample(&n, &s, 524288);
    ck_assert_double_eq_tol(n, 512.5 + 512.0 / 12 / 512 / 512, 1e-6);
    ck_assert_double_eq_tol(n, 512.50016276041993, 1e-9);
    ck_assert_double_eq_tol(s, 524800.16666667, 1e-6);
    /* Three 100000-byte objects: perl gives scale 5.7587649429276091. */
    n = 3, s = 300000;
    profile_unsample(&n, &s, 524288);
    ck_assert_double_eq_tol(n, 17.276294828782827, 1e-9);
    ck_assert_double_eq_tol(s, 1727629.4828782827, 1e-6);
}
END_TEST

START_TEST(unsample_leaves_unsampled_pairs_alone)
{
    double n = 5, s = 640;
    profile_unsample(&n, &s, 0);            /* not sampled */
    ck_assert_double_eq(n, 5);
    ck_assert_double_eq(s, 640);
    n = 0, s = 640;
    profile_unsample(&n, &s, 524288);       /* no objects: jeprof skips */
    ck_assert_double_eq(n, 0);
    ck_assert_double_eq(s, 640);
    n = 4, s = 0;
    profile_unsample(&n, &s, 524288);       /* jeprof would divide by 0 */
    ck_assert(isfinite(n) && n == 4);
    ck_assert_double_eq(s, 0);
}
END_TEST

START_TEST(unsample_v1)
{
    /* rate 524288 (heap/1048576), one 1024-byte object: ratio = 1/512 < 1,
     * so both are divided by it: 512 objects, 512 KiB. */
    double n = 1, s = 1024;
    profile_unsample_v1(&n, &s, 524288);
    ck_assert_double_eq_tol(n, 512, 1e-9);
    ck_assert_double_eq_tol(s, 524288, 1e-6);
    /* ratio >= 1: big objects are always sampled, no change. */
    n = 2, s = 2 * 1048576;
    profile_unsample_v1(&n, &s, 524288);
    ck_assert_double_eq(n, 2);
    ck_assert_double_eq(s, 2097152);
}
END_TEST

/* ---- heap_v2 ---- */

static const char v2_text[] =
    "heap_v2/524288\n"
    "  t*: 2: 2048 [0: 0]\n"
    "  t0: 3: 1024 [0: 0]\n"
    "  t5: 1: 1024 [0: 0] pool worker  two\n"
    "@ 0x10 0x20 0x30\n"
    "  t*: 1: 1024 [0: 0]\n"
    "  t0: 1: 1024 [0: 0]\n"
    "@ 0x40\n"
    "  t*: 3: 300000 [0: 0]\n"
    "  t5: 2: 200000 [0: 0]\n"
    "  t9: 1: 100000 [0: 0]\n"
    "\n" MAPS;

START_TEST(v2_structure)
{
    struct profile *p = parse(v2_text);
    ck_assert_msg(p != NULL, "%s", err.msg);
    ck_assert_int_eq(p->format, PROFILE_HEAP_V2);
    ck_assert_uint_eq(p->period, 524288);
    ck_assert_uint_eq(p->header_period, 524288);
    ck_assert(!p->truncated);
    ck_assert_str_eq(p->warning, "");
    ck_assert(!p->has_alloc);
    ck_assert_str_eq(p->name, "t.heap");

    ck_assert_uint_eq(p->nstacks, 2);
    ck_assert_uint_eq(p->nframes, 4);
    const struct profile_stack *a = &p->stacks[0], *b = &p->stacks[1];
    ck_assert_uint_eq(a->nframes, 3);
    ck_assert_uint_eq(profile_frame(p, a->frame0), 0x10);     /* innermost first */
    ck_assert_uint_eq(profile_frame(p, a->frame0 + 2), 0x30);
    ck_assert_uint_eq(b->nframes, 1);
    ck_assert_uint_eq(profile_frame(p, b->frame0), 0x40);
    assert_inuse(&a->v, 1, 1024, p->period);
    assert_inuse(&b->v, 3, 300000, p->period);

    /* Threads: two from the header (one named, spaces kept), t9 only in a stack. */
    ck_assert_uint_eq(p->nthreads, 3);
    ck_assert_uint_eq(p->threads[0].id, 0);
    ck_assert_ptr_null(p->threads[0].name);
    ck_assert_uint_eq(p->threads[1].id, 5);
    ck_assert_str_eq(p->threads[1].name, "pool worker  two");
    ck_assert_uint_eq(p->threads[2].id, 9);
    ck_assert_ptr_null(p->threads[2].name);

    ck_assert_uint_eq(a->nsamples, 1);
    ck_assert_uint_eq(b->nsamples, 2);
    ck_assert_uint_eq(p->nsamples, 3);
    ck_assert_uint_eq(p->samples[b->sample0].thread, 1);        /* t5 */
    ck_assert_uint_eq(p->samples[b->sample0 + 1].thread, 2);    /* t9 */
    ck_assert_uint_eq(p->maps.n, 1);
    ck_assert_str_eq(p->maps.v[0].path, "/usr/bin/prog");
    profile_free(p);
}
END_TEST

START_TEST(v2_values_are_unsampled_per_line)
{
    struct profile *p = parse(v2_text);
    ck_assert_msg(p != NULL, "%s", err.msg);
    /* Stack 0: perl's 512.50016276041993 objects, 524800.16666667 bytes.
     * Stack 1: 3 x 100000 B: 17.276294828782827 objects, 1727629.4828782827 B. */
    ck_assert_double_eq_tol(p->stacks[0].v.inuse_objects, 512.50016276041993, 1e-9);
    ck_assert_double_eq_tol(p->stacks[1].v.inuse_bytes, 1727629.4828782827, 1e-6);
    /* Total = sum of the unsampled stacks, not the unsampled sum. */
    ck_assert_double_eq_tol(p->total.inuse_objects, 512.50016276041993 + 17.276294828782827, 1e-8);
    ck_assert_double_eq_tol(p->total.inuse_bytes, 524800.16666667 + 1727629.4828782827, 1e-5);
    ck_assert_double_eq(p->total.alloc_bytes, 0);
    /* Thread lines are unsampled on their own: t9, one 100000-byte object:
     * x = 100000/524288, scale = 1/(1-e^-x) = 5.7587649429276091 (as above). */
    const struct profile_thread_sample *t9 = &p->samples[p->stacks[1].sample0 + 1];
    ck_assert_double_eq_tol(t9->v.inuse_bytes, 575876.49429276091, 1e-6);
    /* The header's lines are unsampled too: t*: 2 objects, 2048 bytes has
     * the same mean size as stack 0, so 2 x 512.50016... */
    ck_assert_double_eq_tol(p->header_total.inuse_objects, 2 * 512.50016276041993, 1e-8);
    ck_assert_double_eq_tol(p->threads[1].header.inuse_bytes, 524800.16666667, 1e-6);
    profile_free(p);
}
END_TEST

START_TEST(v2_cumulative_counts)
{
    struct profile *p = parse("heap_v2/524288\n"
                              "@ 0x1\n"
                              "  t*: 0: 0 [1: 1024]\n"
                              "  t3: 0: 0 [1: 1024]\n"
                              "\n" MAPS);
    ck_assert_msg(p != NULL, "%s", err.msg);
    ck_assert(p->has_alloc);
    ck_assert_double_eq(p->total.inuse_objects, 0);
    ck_assert_double_eq_tol(p->total.alloc_objects, 512.50016276041993, 1e-9);
    ck_assert_double_eq_tol(p->samples[0].v.alloc_bytes, 524800.16666667, 1e-6);
    profile_free(p);
}
END_TEST

START_TEST(v2_period_one_and_zero)
{
    /* heap_v2/1 (lg_prof_sample:0): ratio = bytes per object, scale ~1. */
    struct profile *p = parse("heap_v2/1\n@ 0x1\n  t*: 2: 2048 [0: 0]\n\n" MAPS);
    ck_assert_msg(p != NULL, "%s", err.msg);
    ck_assert_double_eq(p->total.inuse_objects, 2);
    ck_assert_double_eq(p->total.inuse_bytes, 2048);
    profile_free(p);
    /* heap_v2/0: jeprof does not adjust at all; 1 byte each would otherwise
     * be scaled hugely. */
    p = parse("heap_v2/0\n@ 0x1\n  t*: 7: 7 [0: 0]\n\n" MAPS);
    ck_assert_msg(p != NULL, "%s", err.msg);
    ck_assert_uint_eq(p->period, 0);
    ck_assert_double_eq(p->total.inuse_bytes, 7);
    profile_free(p);
}
END_TEST

START_TEST(v2_odd_stacks)
{
    /* "@" alone (no frames), 300 frames, "0" for a null frame, bare and
     * upper-case hex, leading zeros beyond 16 digits, CRLF line ends. */
    char text[16384];
    int n = snprintf(text, sizeof text, "heap_v2/0\r\n@\r\n  t*: 1: 8 [0: 0]\r\n@");
    for (int i = 0; i < 300; i++)
        n += snprintf(text + n, sizeof text - (size_t)n, " 0x%x", i + 1);
    snprintf(text + n, sizeof text - (size_t)n,
             "\n  t*: 1: 8 [0: 0]\n@ 0 ABC 0XfF 0x0000000000000000001\n  t*: 1: 8 [0: 0]\n\n" MAPS);
    struct profile *p = parse(text);
    ck_assert_msg(p != NULL, "%s", err.msg);
    ck_assert_uint_eq(p->nstacks, 3);
    ck_assert_uint_eq(p->stacks[0].nframes, 0);
    ck_assert_uint_eq(p->stacks[1].nframes, 300);
    ck_assert_uint_eq(profile_frame(p, p->stacks[1].frame0 + 299), 300);
    size_t f = p->stacks[2].frame0;
    ck_assert_uint_eq(p->stacks[2].nframes, 4);
    ck_assert_uint_eq(profile_frame(p, f), 0);
    ck_assert_uint_eq(profile_frame(p, f + 1), 0xabc);
    ck_assert_uint_eq(profile_frame(p, f + 2), 0xff);
    ck_assert_uint_eq(profile_frame(p, f + 3), 1);
    ck_assert_uint_eq(p->frames[f + 3], p->frames[p->stacks[1].frame0]);   /* 0x1 again */
    ck_assert_uint_eq(p->naddrs, 302);   /* 1..300, 0 and 0xabc */
    ck_assert_double_eq(p->total.inuse_objects, 3);
    profile_free(p);
}
END_TEST

/* Stacks that share first and last frames with the one before, in many
 * ways (one frame more or less, the same frame repeated, a token that is
 * a prefix of another, spaces doubled, tabs, identical lines): each frame
 * must be what the text says, read independently with strtoull. */
START_TEST(v2_stacks_sharing_frames)
{
    static const char *const toks[] = {
        "0x10", "0x1", "0x100", "0x7f0000001000", "0x7f00000010", "0", "0x10a", "ABC",
    };
    static const char *const seps[] = {" ", " ", " ", "  ", "\t", " \t "};
    static char text[1 << 20];
    static char lines[2000][200];
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    int n = snprintf(text, sizeof text, "heap_v2/0\n");
    size_t nlines = 0;
    char prev[200] = "";
    for (; nlines < 2000; nlines++) {
        char *l = lines[nlines];
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        unsigned how = (unsigned)(seed >> 60) % 4;
        if (how == 0 && prev[0]) {
            strcpy(l, prev);                       /* the same line again */
        } else {
            size_t len = 0;
            unsigned count = (unsigned)(seed >> 33) % 9;
            for (unsigned i = 0; i < count; i++) {
                seed = seed * 6364136223846793005ull + 1442695040888963407ull;
                /* mostly the previous line's token at this place */
                const char *t = toks[(seed >> 40) % 8];
                if ((seed >> 20) % 4 && i < 8)
                    t = toks[(i * 3 + (how == 1 ? 0 : i / 4)) % 8];
                len += (size_t)snprintf(l + len, 200 - len, "%s%s",
                                        seps[(seed >> 50) % 6], t);
            }
            l[len] = '\0';
        }
        strcpy(prev, l);
        n += snprintf(text + n, sizeof text - (size_t)n, "@%s\n  t*: 1: 8 [0: 0]\n", l);
    }
    snprintf(text + n, sizeof text - (size_t)n, MAPS);
    struct profile *p = parse(text);
    ck_assert_msg(p != NULL, "%s", err.msg);
    ck_assert_uint_eq(p->nstacks, nlines);
    for (size_t i = 0; i < nlines; i++) {
        char buf[200], *save = NULL;
        strcpy(buf, lines[i]);
        size_t k = 0;
        for (char *t = strtok_r(buf, " \t", &save); t; t = strtok_r(NULL, " \t", &save), k++) {
            ck_assert_uint_lt(k, p->stacks[i].nframes);
            ck_assert_uint_eq(profile_frame(p, p->stacks[i].frame0 + k), strtoull(t, NULL, 16));
        }
        ck_assert_msg(k == p->stacks[i].nframes, "stack %zu: %zu frames, read %u", i, k,
                      p->stacks[i].nframes);
    }
    profile_free(p);
}
END_TEST

/* Addresses of every length from 1 to 16 digits (and longer with leading
 * zeros), in either case, with and without 0x, each also last on its line
 * and followed by one to eight more characters: the reader takes eight
 * digits at a time where it can, one at a time where it cannot. */
START_TEST(v2_address_lengths)
{
    static char text[1 << 16];
    uint64_t want[600];
    size_t nwant = 0;
    uint64_t x = 0x9e3779b97f4a7c15ull;
    int n = snprintf(text, sizeof text, "heap_v2/0\n");
    for (int digits = 1; digits <= 20; digits++) {
        for (int variant = 0; variant < 6; variant++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            /* beyond 16 digits, leading zeros make up the rest */
            uint64_t v = digits >= 16 ? x : x & ((1ull << (4 * digits)) - 1);
            char hex[32];
            snprintf(hex, sizeof hex, variant & 1 ? "%0*" PRIX64 : "%0*" PRIx64,
                     digits, v);
            want[nwant++] = strtoull(hex, NULL, 16);
            want[nwant++] = 0x5;
            /* this address then a short one padded to 1..8 more characters */
            n += snprintf(text + n, sizeof text - (size_t)n, "@ %s%s %*s\n  t*: 1: 1 [0: 0]\n",
                          variant & 2 ? "0x" : "", hex, 1 + variant + (digits & 1), "5");
            want[nwant] = want[nwant - 2];
            nwant++;
            n += snprintf(text + n, sizeof text - (size_t)n, "@ %s%s\n  t*: 1: 1 [0: 0]\n",
                          variant & 2 ? "" : "0X", hex);
        }
    }
    snprintf(text + n, sizeof text - (size_t)n, "\n" MAPS);
    struct profile *p = parse(text);
    ck_assert_msg(p != NULL, "%s", err.msg);
    ck_assert_uint_eq(p->nframes, nwant);
    for (size_t i = 0; i < nwant; i++)
        ck_assert_msg(profile_frame(p, i) == want[i], "frame %zu: %" PRIx64 " != %" PRIx64,
                      i, profile_frame(p, i), want[i]);
    profile_free(p);
    parse_fails("heap_v2/1\n@ 0x12345678g 0x1\n", "found '0x12345678g 0x1'");
    parse_fails("heap_v2/1\n@ 0x1234567\xc3\xa9 0x1\n", "found '0x1234567?? 0x1'");
    parse_fails("heap_v2/1\n@ 0x123456789abcdef0F 0x1\n",
                "return address '0x123456789abcdef0F' is longer than 64 bits");
}
END_TEST

START_TEST(v2_megabyte_line)
{
    /* A 2 MB stack line of addresses parses (and a 2 MB junk line fails
     * with a short quote, not a 2 MB message). */
    size_t frames = 200000, cap = frames * 10 + 256;
    char *text = malloc(cap);
    size_t n = (size_t)snprintf(text, cap, "heap_v2/1\n@");
    for (size_t i = 0; i < frames; i++)
        n += (size_t)snprintf(text + n, cap - n, " 0x%zx", i);
    snprintf(text + n, cap - n, "\n  t*: 1: 8 [0: 0]\n\n" MAPS);
    struct profile *p = parse(text);
    ck_assert_msg(p != NULL, "%s", err.msg);
    ck_assert_uint_eq(p->stacks[0].nframes, frames);
    profile_free(p);
    memset(text, 'x', cap - 1);
    memcpy(text, "heap_v2/1\n", 10);
    text[cap - 2] = '\n';
    text[cap - 1] = '\0';
    parse_fails(text, "t.heap:2: expected '@ <addresses>'");
    ck_assert(strlen(err.msg) < 300);
    free(text);
}
END_TEST

/* Thread lines spaced as jemalloc writes them are read by a quicker path
 * than others; both must give the same values, thread ids and errors.
 * The numbers have 1 to 20 digits (20: the careful path only). */
static char *thread_lines(int stacks, const char *sep, int dup_at)
{
    static const char *const nums[] = {
        "0", "7", "32", "4096", "123456789", "1234567890123456789",
        "18446744073709551615", "99",
    };
    size_t cap = (size_t)stacks * 200 + 1024, n = 0;
    char *text = malloc(cap);
    ck_assert_ptr_nonnull(text);
    n += (size_t)snprintf(text + n, cap - n, "heap_v2/524288\n");
    for (int i = 0; i < stacks; i++) {
        const char *a = nums[i % 8], *b = nums[(i / 8) % 8], *c = nums[(i / 3) % 8];
        n += (size_t)snprintf(text + n, cap - n, "@ 0x%x\n  t*:%s%s: %s [%s: %s]\n", i + 1, sep,
                              a, b, c, a);
        if (i == dup_at)
            n += (size_t)snprintf(text + n, cap - n, "  t*: 1: 1 [0: 0]\n");
        n += (size_t)snprintf(text + n, cap - n, "  t%d:%s%s: %s [%s: %s]\n", i % 5, sep, a, b,
                              c, a);
    }
    snprintf(text + n, cap - n, "\n" MAPS);
    return text;
}

START_TEST(v2_quick_thread_lines)
{
    char *quick = thread_lines(400, " ", -1), *careful = thread_lines(400, "  ", -1);
    struct profile *p = parse(quick);
    ck_assert_msg(p != NULL, "%s", err.msg);
    struct profile *q = parse(careful);
    ck_assert_msg(q != NULL, "%s", err.msg);
    ck_assert_uint_eq(p->nstacks, 400);
    ck_assert_uint_eq(p->nsamples, 400);
    ck_assert_uint_eq(p->nthreads, q->nthreads);
    for (size_t i = 0; i < p->nthreads; i++)
        ck_assert_uint_eq(p->threads[i].id, q->threads[i].id);
    for (size_t i = 0; i < 400; i++) {
        ck_assert_mem_eq(&p->stacks[i].v, &q->stacks[i].v, sizeof p->stacks[i].v);
        ck_assert_mem_eq(&p->samples[i], &q->samples[i], sizeof p->samples[i]);
    }
    ck_assert_mem_eq(&p->total, &q->total, sizeof p->total);
    profile_free(p);
    profile_free(q);
    free(quick);
    free(careful);
    /* a second t* line inside a long file: the same message and line
     * (stack 100's "@" is line 2 + 3 * 100) */
    quick = thread_lines(400, " ", 100);
    careful = thread_lines(400, "  ", 100);
    parse_fails(quick, "t.heap:304: a second 't*:' line for the stack at line 302");
    parse_fails(careful, "t.heap:304: a second 't*:' line for the stack at line 302");
    free(quick);
    free(careful);
}
END_TEST

START_TEST(v2_many_threads)
{
    /* 300 header threads, then stacks naming them in reverse: each sample
     * must point at the thread with its own id (the lookup table grows
     * and collides along the way). */
    size_t cap = 64 * 1024;
    char *text = malloc(cap);
    size_t n = (size_t)snprintf(text, cap, "heap_v2/0\n");
    for (int i = 0; i < 300; i++)
        n += (size_t)snprintf(text + n, cap - n, "  t%d: 1: 1 [0: 0] thread %d\n", i * 4096, i);
    for (int i = 299; i >= 0; i--)
        n += (size_t)snprintf(text + n, cap - n, "@ 0x%x\n  t*: 1: %d [0: 0]\n  t%d: 1: %d [0: 0]\n",
                              i + 1, i + 1, i * 4096, i + 1);
    snprintf(text + n, cap - n, "\n" MAPS);
    struct profile *p = parse(text);
    ck_assert_msg(p != NULL, "%s", err.msg);
    ck_assert_uint_eq(p->nthreads, 300);
    for (size_t s = 0; s < p->nstacks; s++) {
        const struct profile_thread *t = &p->threads[p->samples[p->stacks[s].sample0].thread];
        ck_assert_double_eq((double)t->id / 4096 + 1, p->stacks[s].v.inuse_bytes);
        char want[32];
        snprintf(want, sizeof want, "thread %d", (int)(t->id / 4096));
        ck_assert_str_eq(t->name, want);
    }
    profile_free(p);
    free(text);
}
END_TEST

/* ---- legacy formats ---- */

START_TEST(legacy_heap_v2)
{
    struct profile *p = parse("heap profile: 1: 1024 [ 1: 1024] @ heap_v2/524288\n"
                              "1: 1024 [1: 1024] @ 0x1 0x2\n"
                              "2: 200000 [ 0: 0] @ 0x3\n"
                              "\n" MAPS);
    ck_assert_msg(p != NULL, "%s", err.msg);
    ck_assert_int_eq(p->format, PROFILE_HEAP_V2_LEGACY);
    ck_assert_uint_eq(p->period, 524288);
    ck_assert_uint_eq(p->nstacks, 2);
    ck_assert_uint_eq(p->stacks[0].nframes, 2);
    ck_assert_uint_eq(profile_frame(p, 1), 2);
    assert_inuse(&p->stacks[1].v, 2, 200000, p->period);
    ck_assert_uint_eq(p->nsamples, 0);
    ck_assert(p->has_alloc);
    ck_assert(!p->truncated);
    ck_assert_double_eq_tol(p->stacks[0].v.inuse_objects, 512.50016276041993, 1e-9);
    ck_assert_double_eq_tol(p->stacks[0].v.alloc_bytes, 524800.16666667, 1e-6);
    ck_assert_double_eq_tol(p->header_total.inuse_objects, 512.50016276041993, 1e-9);
    profile_free(p);
}
END_TEST

START_TEST(legacy_heap_v2_without_period_uses_128k)
{
    /* jeprof: no period (or 0) means 1-in-128KiB.  perl: x = 1024/131072,
     * 1/(1-e^-x) = 128.50065104100443. */
    static const char *headers[] = {
        "heap profile: 1: 1024 [0: 0] @ heap_v2\n",
        "heap profile: 1: 1024 [0: 0] @ heap_v2/0\n",
        "heap profile: 1: 1024 [0: 0] @ heap_v2 /131072\n",
    };
    for (int i = 0; i < 3; i++) {
        char text[512];
        snprintf(text, sizeof text, "%s1: 1024 [0: 0] @ 0x1\n" MAPS, headers[i]);
        struct profile *p = parse(text);
        ck_assert_msg(p != NULL, "%s", err.msg);
        ck_assert_uint_eq(p->period, 131072);
        ck_assert_double_eq_tol(p->total.inuse_objects, 128.50065104100443, 1e-9);
        profile_free(p);
    }
}
END_TEST

START_TEST(legacy_heapprofile_is_not_sampled)
{
    struct profile *p = parse("heap profile:   3:   3000 [  5:  5000] @ heapprofile\n"
                              "   3:   3000 [   5:   5000] @ 0x00000000004005d0 0x400a\n"
                              MAPS);
    ck_assert_msg(p != NULL, "%s", err.msg);
    ck_assert_int_eq(p->format, PROFILE_HEAPPROFILE);
    ck_assert_uint_eq(p->period, 0);
    ck_assert_double_eq(p->total.inuse_objects, 3);
    ck_assert_double_eq(p->total.inuse_bytes, 3000);
    ck_assert_double_eq(p->total.alloc_bytes, 5000);
    ck_assert_uint_eq(profile_frame(p, 0), 0x4005d0);
    profile_free(p);
    /* growth profiles and other types without "heap" are not adjusted either */
    p = parse("heap profile: 1: 8 [1: 8] @ growth\n1: 8 [1: 8] @ 0x1\n" MAPS);
    ck_assert_msg(p != NULL, "%s", err.msg);
    ck_assert_int_eq(p->format, PROFILE_HEAPPROFILE);
    ck_assert_double_eq(p->total.inuse_objects, 1);
    ck_assert(!p->page_faults);
    profile_free(p);
}
END_TEST

/* memprof's `faults` dumps: not sampled, and known for page faults */
START_TEST(legacy_page_faults_are_known)
{
    struct profile *p = parse("heap profile: 24: 98304 [0: 0] @ page_faults\n"
                              "16: 65536 [0: 0] @ 0x4005d0 0x400a\n"
                              "8: 32768 [0: 0] @ 0x400b\n" MAPS);
    ck_assert_msg(p != NULL, "%s", err.msg);
    ck_assert(p->page_faults);
    ck_assert(!p->has_alloc);
    ck_assert_uint_eq(p->period, 0);
    ck_assert_double_eq(p->total.inuse_objects, 24);
    ck_assert_double_eq(p->total.inuse_bytes, 98304);
    profile_free(p);
}
END_TEST

START_TEST(legacy_heap_n_uses_half_the_period)
{
    /* heap/1048576: rate 524288, version 1: one 1024-byte object -> 512. */
    struct profile *p = parse("heap profile: 1: 1024 [1: 1024] @ heap/1048576\n"
                              "1: 1024 [1: 1024] @ 0x1\n" MAPS);
    ck_assert_msg(p != NULL, "%s", err.msg);
    ck_assert_int_eq(p->format, PROFILE_HEAP_SAMPLED);
    ck_assert_uint_eq(p->header_period, 1048576);
    ck_assert_uint_eq(p->period, 524288);
    ck_assert_double_eq_tol(p->total.inuse_objects, 512, 1e-9);
    ck_assert_double_eq_tol(p->total.alloc_bytes, 524288, 1e-6);
    profile_free(p);
    /* heap/1: rate 0.5 exactly as jeprof computes int(1)/2 */
    p = parse("heap profile: 1: 1 [1: 1] @ heap/1\n4: 1 [0: 0] @ 0x1\n" MAPS);
    ck_assert_msg(p != NULL, "%s", err.msg);
    ck_assert_double_eq(p->sample_rate, 0.5);
    /* ratio = (1/4)/0.5 = 0.5 -> 8 objects, 2 bytes */
    ck_assert_double_eq_tol(p->total.inuse_objects, 8, 1e-12);
    ck_assert_double_eq_tol(p->total.inuse_bytes, 2, 1e-12);
    profile_free(p);
}
END_TEST

START_TEST(legacy_without_type)
{
    /* Equal in-use and total pairs: an old remote heap profile, version 1
     * at 128 KiB: 1024/131072 = 1/128 -> 128 objects. */
    struct profile *p = parse("heap profile: 1: 1024 [1: 1024]\n1: 1024 [1: 1024] @ 0x1\n" MAPS);
    ck_assert_msg(p != NULL, "%s", err.msg);
    ck_assert_int_eq(p->format, PROFILE_HEAP_SAMPLED);
    ck_assert_double_eq_tol(p->total.inuse_objects, 128, 1e-9);
    profile_free(p);
    p = parse("heap profile: 1: 1024 [2: 2048]\n1: 1024 [2: 2048] @ 0x1\n" MAPS);
    ck_assert_msg(p != NULL, "%s", err.msg);
    ck_assert_int_eq(p->format, PROFILE_HEAPPROFILE);
    ck_assert_double_eq(p->total.inuse_objects, 1);
    profile_free(p);
}
END_TEST

START_TEST(legacy_truncated)
{
    /* No maps section, last line cut: whole lines kept. */
    struct profile *p = parse("heap profile: 1: 8 [1: 8] @ heapprofile\n"
                              "1: 8 [1: 8] @ 0x1\n"
                              "2: 16 [2: 16] @ 0x2 0x3\n"
                              "5: 4");
    ck_assert_msg(p != NULL, "%s", err.msg);
    ck_assert(p->truncated);
    ck_assert_uint_eq(p->nstacks, 2);
    ck_assert_double_eq(p->total.inuse_objects, 3);
    ck_assert_ptr_nonnull(strstr(p->warning, "t.heap"));
    profile_free(p);
}
END_TEST

/* ---- truncated heap_v2 ---- */

START_TEST(truncated_inside_a_stack)
{
    /* EOF after a stack's t* line: its thread lines may be missing, so the
     * whole stack goes; the one before (followed by '@') stays. */
    struct profile *p = parse("heap_v2/0\n"
                              "@ 0x1\n  t*: 1: 8 [0: 0]\n  t0: 1: 8 [0: 0]\n"
                              "@ 0x2 0x3\n  t*: 2: 16 [0: 0]\n");
    ck_assert_msg(p != NULL, "%s", err.msg);
    ck_assert(p->truncated);
    ck_assert_uint_eq(p->nstacks, 1);
    ck_assert_uint_eq(p->nframes, 1);
    ck_assert_uint_eq(p->nsamples, 1);
    ck_assert_double_eq(p->total.inuse_objects, 1);
    ck_assert_msg(strstr(p->warning, "t.heap:5: the file ends inside a stack") != NULL, "%s", p->warning);
    ck_assert_uint_eq(p->maps.n, 0);
    profile_free(p);
}
END_TEST

START_TEST(truncated_mid_line)
{
    /* A cut thread line ("2: 1" might have been "2: 1024") is not read. */
    struct profile *p = parse("heap_v2/0\n"
                              "@ 0x1\n  t*: 1: 8 [0: 0]\n"
                              "@ 0x2\n  t*: 2: 1");
    ck_assert_msg(p != NULL, "%s", err.msg);
    ck_assert(p->truncated);
    ck_assert_uint_eq(p->nstacks, 1);
    ck_assert_double_eq(p->total.inuse_bytes, 8);
    profile_free(p);
    /* A cut '@' line proves the stack before it whole. */
    p = parse("heap_v2/1\n@ 0x1\n  t*: 1: 8 [0: 0]\n@ 0x2 0x");
    ck_assert_msg(p != NULL, "%s", err.msg);
    ck_assert(p->truncated);
    ck_assert_uint_eq(p->nstacks, 1);
    ck_assert_uint_eq(p->nframes, 1);
    ck_assert_ptr_nonnull(strstr(p->warning, "before MAPPED_LIBRARIES"));
    profile_free(p);
}
END_TEST

START_TEST(truncated_after_blank_line_keeps_last_stack)
{
    struct profile *p = parse("heap_v2/1\n@ 0x1\n  t*: 1: 8 [0: 0]\n\nMAPPED_LIB");
    ck_assert_msg(p != NULL, "%s", err.msg);
    ck_assert(p->truncated);
    ck_assert_uint_eq(p->nstacks, 1);
    profile_free(p);
}
END_TEST

START_TEST(no_maps_section_keeps_every_stack)
{
    /* As jemalloc writes a dump where it cannot read /proc/self/maps (a
     * chroot without /proc): the last stack's thread line, its newline,
     * and nothing after.  Every stack is kept; the file is not truncated. */
    struct profile *p = parse("heap_v2/65536\n  t*: 83: 67189783 [0: 0]\n"
                              "  t0: 19: 80927 [0: 0]\n  t1: 64: 67108856 [0: 0]\n"
                              "@ 0x1 0x2\n  t*: 19: 80927 [0: 0]\n  t0: 19: 80927 [0: 0]\n"
                              "@ 0x3 0x4 0x5\n  t*: 64: 67108856 [0: 0]\n"
                              "  t1: 64: 67108856 [0: 0]\n");
    ck_assert_msg(p != NULL, "%s", err.msg);
    ck_assert(!p->truncated);
    ck_assert(p->no_maps_section);
    ck_assert_uint_eq(p->nstacks, 2);
    ck_assert_uint_eq(p->nsamples, 2);
    ck_assert_uint_eq(p->maps.n, 0);
    ck_assert_msg(strstr(p->warning, "t.heap: no MAPPED_LIBRARIES section after its last "
                         "stack") && strstr(p->warning, "kept all 2 stacks") &&
                  strstr(p->warning, "frames cannot be named"), "%s", p->warning);
    profile_free(p);
    /* Without its newline, the same last line is a cut: the stack goes. */
    p = parse("heap_v2/0\n@ 0x1\n  t*: 1: 8 [0: 0]\n  t0: 1: 8 [0: 0]\n"
              "@ 0x2\n  t*: 2: 16 [0: 0]\n  t0: 2: 16 [0: 0]");
    ck_assert_msg(p != NULL, "%s", err.msg);
    ck_assert(p->truncated);
    ck_assert(!p->no_maps_section);
    ck_assert_uint_eq(p->nstacks, 1);
    profile_free(p);
    /* A last stack with its t* line but no thread line yet: cut there. */
    p = parse("heap_v2/0\n@ 0x1\n  t*: 1: 8 [0: 0]\n  t0: 1: 8 [0: 0]\n"
              "@ 0x2\n  t*: 2: 16 [0: 0]\n");
    ck_assert_msg(p != NULL, "%s", err.msg);
    ck_assert(p->truncated);
    ck_assert_uint_eq(p->nstacks, 1);
    profile_free(p);
    /* gperftools' format ends the same way without its maps */
    p = parse("heap profile: 1: 8 [1: 8] @ heapprofile\n1: 8 [1: 8] @ 0x1\n");
    ck_assert_msg(p != NULL, "%s", err.msg);
    ck_assert(!p->truncated);
    ck_assert(p->no_maps_section);
    ck_assert_uint_eq(p->nstacks, 1);
    profile_free(p);
}
END_TEST

START_TEST(header_only_is_valid)
{
    /* A valid header and no stack: an empty profile, still usable. */
    struct profile *p = parse("heap_v2/524288\n  t*: 0: 0 [0: 0]\n  t0: 0: 0 [0: 0] main\n");
    ck_assert_msg(p != NULL, "%s", err.msg);
    ck_assert_uint_eq(p->nstacks, 0);
    ck_assert(!p->truncated);        /* it ends whole: only the maps are missing */
    ck_assert(p->no_maps_section);
    ck_assert_uint_eq(p->nthreads, 1);
    ck_assert_str_eq(p->threads[0].name, "main");
    ck_assert_double_eq(p->total.inuse_bytes, 0);
    profile_free(p);
    p = parse("heap_v2/524288\n\nMAPPED_LIBRARIES:\n");
    ck_assert_msg(p != NULL, "%s", err.msg);
    ck_assert(!p->truncated);
    ck_assert_uint_eq(p->nstacks, 0);
    profile_free(p);
}
END_TEST

/* ---- errors ---- */

START_TEST(errors_not_a_profile)
{
    struct profile *p = profile_parse("", 0, "e.heap", &err);
    ck_assert_ptr_null(p);
    ck_assert_str_eq(err.msg, "e.heap: the file is empty, not a heap profile");
    static const char gz[] = "\x1f\x8b\x08\0\0\0";
    ck_assert_ptr_null(profile_parse(gz, sizeof gz, "g.pb.gz", &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "g.pb.gz: not a heap profile: it is gzip-compressed, probably a pprof"));
    static const char pb[] = "\x0a\x04\x08\x01\x10\x02";
    ck_assert_ptr_null(profile_parse(pb, sizeof pb - 1, "p.pb", &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "p.pb: not a heap profile: it looks like an uncompressed pprof protobuf"));
    static const char cpu[] = "\0\0\0\0\3\0\0\0\0\0\0\0";
    ck_assert_ptr_null(profile_parse(cpu, sizeof cpu, "c.prof", &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "CPU or contention profile"));
    parse_fails("--- contention\ncycles/second = 1\n", "CPU or contention profile");
    parse_fails("--- symbol\nbinary=/bin/x\n", "symbolized pprof profile");
    static const char bin[] = "hea\0p\n";
    ck_assert_ptr_null(profile_parse(bin, sizeof bin - 1, "b", &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "b: not a heap profile: its first line holds binary data"));
    parse_fails("\n", "t.heap:1: not a heap profile: the first line should start with 'heap_v2/'");
    parse_fails("hello world\n", "found 'hello world'");
    parse_fails("heapz/1\n", "t.heap:1: not a heap profile");
}
END_TEST

START_TEST(errors_header)
{
    parse_fails("heap_v2/524288", "t.heap:1: the file ends inside the header line");
    parse_fails("heap_v2/\n", "t.heap:1: expected the sampling period after 'heap_v2/'");
    parse_fails("heap_v2/x\n", "found 'x'");
    parse_fails("heap_v2/99999999999999999999\n", "t.heap:1: the sampling period after 'heap_v2/' is too large");
    parse_fails("heap_v2/512 junk\n", "t.heap:1: unexpected 'junk' after the sampling period");
    parse_fails("heap profile: x\n", "t.heap:1: expected 'heap profile: <objects>: <bytes> [<objects>: <bytes>] @ <type>/<period>' (expected a count of objects, found 'x')");
    parse_fails("heap profile: 1: 2 [3: 4\n", "(expected ']', found the end of the line)");
    parse_fails("heap profile: 1: 2 [3: 4] # heap\n", "t.heap:1: expected '@ <type>' after the totals, found '# heap'");
    parse_fails("heap profile: 1: 2 [3: 4] @ heap_v2/big\n", "t.heap:1: expected a sampling period after '/', found 'big'");
    parse_fails("heap profile: 1: 2 [3: 4] @ heap/99999999999999999999\n", "t.heap:1: the sampling period after '/' is too large");
    parse_fails("heap_v2/1\n  t*: 1: 2 [3: 4] name\n", "t.heap:2: unexpected 'name' after ']'");
}
END_TEST

START_TEST(errors_stacks)
{
    parse_fails("heap_v2/1\n# comment\n", "t.heap:2: expected '@ <addresses>', a 't*:' or 't<thread>:' line, or 'MAPPED_LIBRARIES:', found '# comment'");
    parse_fails("heap_v2/1\n@ 0x1 zz\n  t*: 1: 1 [0: 0]\n\n", "t.heap:2: expected a hexadecimal return address, found 'zz'");
    parse_fails("heap_v2/1\n@ 0x1g\n", "found '0x1g'");
    parse_fails("heap_v2/1\n@ 0x\n", "found '0x'");
    parse_fails("heap_v2/1\n@ 0x10000000000000000\n", "t.heap:2: return address '0x10000000000000000' is longer than 64 bits");
    parse_fails("heap_v2/1\n@ 0x1\n  t*: 18446744073709551616: 1 [0: 0]\n",
                "t.heap:3: a count of objects is too large (more than 2^64-1)");
    parse_fails("heap_v2/1\n@ 0x1\n  t*: 1: 18446744073709551616 [0: 0]\n", "a count of bytes is too large");
    parse_fails("heap_v2/1\n@ 0x1\n  t*: 1 1 [0: 0]\n", "t.heap:3: expected ':', found '1 [0: 0]'");
    parse_fails("heap_v2/1\n@ 0x1\n  t*: 1: 1 [x: 0]\n", "expected a cumulative count of objects, found 'x: 0]'");
    parse_fails("heap_v2/1\n@ 0x1\n  t*: 1: 1 [0: ]\n", "expected a cumulative count of bytes, found ']'");
    parse_fails("heap_v2/1\n@ 0x1\n  tx: 1: 1 [0: 0]\n", "t.heap:3: expected 't*:' or 't<thread id>:', found 'tx: 1: 1 [0: 0]'");
    parse_fails("heap_v2/1\n@ 0x1\n  t3: 1: 1 [0: 0]\n@ 0x2\n  t*: 1: 1 [0: 0]\n\n",
                "t.heap:2: this stack has no 't*:' line (found the next section at line 4)");
    parse_fails("heap_v2/1\n@ 0x1\n\nMAPPED_LIBRARIES:\n", "t.heap:2: this stack has no 't*:' line");
    parse_fails("heap_v2/1\n@ 0x1\n  t*: 1: 1 [0: 0]\n  t*: 1: 1 [0: 0]\n", "t.heap:4: a second 't*:' line for the stack at line 2");
    parse_fails("heap_v2/1\n@ 0x1\n  t*: 1: 1 [0: 0]\n  t2: 1: 1 [0: 0] name\n",
                "t.heap:4: unexpected 'name' after ']' (thread names belong in the header only)");
    parse_fails("heap profile: 1: 1 [0: 0] @ heapprofile\n1: 1 [0: 0] 0x1\n", "t.heap:2: expected '@', found '0x1'");
    parse_fails("heap profile: 1: 1 [0: 0] @ heapprofile\n@ 0x1\n", "t.heap:2: expected a count of objects, found '@ 0x1'");
    parse_fails("heap profile: 1: 1 [0: 0] @ heapprofile\n1: 1 [0: 0] @ 0x1 0xq\n", "t.heap:2: expected a hexadecimal return address, found '0xq'");
    static const char nul[] = "heap_v2/1\n@ 0x1\0 0x2\n  t*: 1: 1 [0: 0]\n";
    ck_assert_ptr_null(profile_parse(nul, sizeof nul - 1, "n.heap", &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "n.heap:2: expected a hexadecimal return address, found '0x1? 0x2'"));
}
END_TEST

START_TEST(garbage_never_crashes)
{
    /* Every prefix of a valid profile either parses or fails cleanly, and
     * random bytes after a valid header fail cleanly. */
    size_t len = strlen(v2_text);
    for (size_t i = 0; i <= len; i++) {
        struct profile *p = profile_parse(v2_text, i, "cut.heap", &err);
        if (p) {
            ck_assert_uint_le(p->nstacks, 2);
            profile_free(p);
        } else {
            ck_assert_ptr_nonnull(strstr(err.msg, "cut.heap"));
        }
    }
    char buf[4096];
    srand(7);
    for (int round = 0; round < 200; round++) {
        memcpy(buf, "heap_v2/524288\n", 15);
        for (size_t i = 15; i < sizeof buf; i++)
            buf[i] = (char)(rand() % 4 ? " @tx0123456789abcdef:[]*\n"[rand() % 26] : rand());
        struct profile *p = profile_parse(buf, sizeof buf, "rnd", &err);
        profile_free(p);
    }
}
END_TEST

/* ---- files ---- */

START_TEST(load_refuses_non_files)
{
    ck_assert_ptr_null(profile_load_file("/", &err));
    ck_assert_str_eq(err.msg, "/: is a directory, not a heap profile file");
    ck_assert_ptr_null(profile_load_file("/dev/null", &err));
    ck_assert_str_eq(err.msg, "/dev/null: is a character device, not a heap profile file");
    ck_assert_ptr_null(profile_load_file("/nonexistent/x.heap", &err));
    ck_assert_str_eq(err.msg, "/nonexistent/x.heap: cannot read: No such file or directory");

    char dir[] = "/tmp/test_profile.XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char fifo[64], empty[64];
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    snprintf(empty, sizeof empty, "%s/empty", dir);
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    /* Opening a FIFO with no writer would block forever: Check's timeout
     * fails the test if the reader ever does. */
    ck_assert_ptr_null(profile_load_file(fifo, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "is a FIFO, not a heap profile file"));
    FILE *f = fopen(empty, "w");
    fclose(f);
    ck_assert_ptr_null(profile_load_file(empty, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "the file is empty"));
    char sock[64];
    snprintf(sock, sizeof sock, "%s/sock", dir);
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    strcpy(sa.sun_path, sock);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    ck_assert_ptr_null(profile_load_file(sock, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "is a socket, not a heap profile file"));
    close(fd);
    unlink(sock);
    unlink(fifo);
    unlink(empty);
    rmdir(dir);
}
END_TEST

/* A file whose first "line" is larger than a read chunk: refused from the
 * first chunk (it once was read whole, and the detection then looked at
 * the freed first buffer), as a zero-filled file, as text, and as a
 * profile magic preceded by spaces it still is one. */
static void write_file(const char *path, const char *head, char fill, size_t n)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(head, f);
    for (size_t i = 0; i < n; i++)
        fputc(fill, f);
    fclose(f);
}

START_TEST(load_huge_first_line)
{
    char path[] = "/tmp/test_profile_big.XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    write_file(path, "", '\0', 3u << 20);
    ck_assert_ptr_null(profile_load_file(path, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "not a heap profile: it looks like a gperftools CPU"));
    write_file(path, "", 'x', 3u << 20);
    ck_assert_ptr_null(profile_load_file(path, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, ":1: not a heap profile: the first line should start"
                                          " with 'heap_v2/'"));
    ck_assert_ptr_nonnull(strstr(err.msg, "found 'xxxx"));
    write_file(path, "  heap_v2/524288\n  t*: 1: 16 [0: 0]\nMAPPED_LIBRARIES:\n", ' ', 0);
    struct profile *p = profile_load_file(path, &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    ck_assert_uint_eq(p->sample_rate, 524288);
    profile_free(p);
    unlink(path);
}
END_TEST

/* FILE.buildids beside a dump (written by `dump FILE`): round trip, and
 * lines that are not "HEX /PATH" are skipped, not trusted. */
START_TEST(object_ids_beside_the_file)
{
    char path[] = "/tmp/test_profile_ids.XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    write_file(path, "heap_v2/1\n  t*: 1: 16 [0: 0]\nMAPPED_LIBRARIES:\n", ' ', 0);
    struct profile *p = profile_load_file(path, &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    ck_assert_uint_eq(p->nobject_ids, 0);     /* no FILE.buildids: nothing recorded */
    ck_assert_int_gt(p->taken_at, 0);         /* the file's mtime */
    ck_assert_int_eq(profile_add_object_id(p, "/usr/lib/libx.so", "00ab"), 0);
    ck_assert_int_eq(profile_add_object_id(p, "/srv/my prog", "cafe01"), 0);
    ck_assert_int_eq(profile_save_object_ids(p, path, &err), 0);
    profile_free(p);

    char *ids = profile_object_ids_path(path);
    FILE *f = fopen(ids, "a");
    ck_assert_ptr_nonnull(f);
    fputs("zz12 /bad/hex\nabc /odd/length\n00ff relative/path\n00ff\n\n", f);
    fclose(f);
    p = profile_load_file(path, &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    ck_assert_uint_eq(p->nobject_ids, 2);
    ck_assert_str_eq(profile_object_id(p, "/usr/lib/libx.so"), "00ab");
    ck_assert_str_eq(profile_object_id(p, "/srv/my prog"), "cafe01");
    ck_assert_ptr_null(profile_object_id(p, "/bad/hex"));
    profile_free(p);
    unlink(ids);
    free(ids);
    unlink(path);
}
END_TEST

/* tests/unit/data/jemalloc_unsampled.heap: made by gen_unsampled.c with
 * MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:0.
 * jeprof --text: "Total: 1.6 MB"; --inuse_objects: "Total: 122 objects". */
START_TEST(real_dump_unsampled)
{
    struct profile *p = profile_load_file(data_file("jemalloc_unsampled.heap"), &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    ck_assert_int_eq(p->format, PROFILE_HEAP_V2);
    ck_assert_uint_eq(p->period, 1);
    ck_assert_uint_eq(p->nstacks, 6);
    ck_assert(!p->truncated);
    /* 100 x 1000 B (1024 usable) + 10 x 100000 B (114688 usable) on the
     * main thread, 3 big + 7 small on "worker two", plus ld.so's two. */
    ck_assert_double_eq(p->total.inuse_objects, 122);
    ck_assert_double_eq(p->total.inuse_bytes, 1682752);
    ck_assert_double_eq_tol(p->total.inuse_bytes / 1048576, 1.6, 0.05);
    ck_assert_uint_eq(p->nthreads, 2);
    ck_assert_str_eq(p->threads[1].name, "worker two");
    ck_assert_uint_gt(p->maps.n, 3);
    ck_assert_ptr_nonnull(maps_find(&p->maps, profile_frame(p, p->stacks[0].frame0)));
    profile_free(p);
}
END_TEST

/* tests/unit/data/jemalloc_sampled.heap: gen_sampled.c with
 * MALLOC_CONF=prof:true,prof_active:true,prof_accum:true (1 in 512 KiB).
 * perl over its t* stack lines with AdjustSamples' formula:
 * 30023.6127 objects, 64255387.2 bytes, alloc 34344.3672 / 86383205.3.
 * jeprof --text: Total 61.3 MB, 30023 objects, alloc 82.4 MB, 34344 objects. */
START_TEST(real_dump_sampled)
{
    struct profile *p = profile_load_file(data_file("jemalloc_sampled.heap"), &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    ck_assert_uint_eq(p->period, 524288);
    ck_assert(p->has_alloc);
    ck_assert_double_eq_tol(p->total.inuse_objects, 30023.6127, 1e-3);
    ck_assert_double_eq_tol(p->total.inuse_bytes, 64255387.2, 0.1);
    ck_assert_double_eq_tol(p->total.alloc_objects, 34344.3672, 1e-3);
    ck_assert_double_eq_tol(p->total.alloc_bytes, 86383205.3, 0.1);
    ck_assert_double_eq_tol(p->total.inuse_bytes / 1048576, 61.3, 0.05);
    ck_assert_str_eq(p->threads[1].name, "pool worker 1");
    profile_free(p);
}
END_TEST

/* ---- delta (heap?seconds=N) ---- */

/* The stack of p whose first frame is pc, or NULL. */
static const struct profile_stack *stack_at(const struct profile *p, uint64_t pc)
{
    for (size_t i = 0; i < p->nstacks; i++)
        if (p->stacks[i].nframes && profile_frame(p, p->stacks[i].frame0) == pc)
            return &p->stacks[i];
    return NULL;
}

START_TEST(delta_subtracts_matching_stacks)
{
    /* Not sampled (heap_v2/0): the values are the counts. */
    struct profile *before = parse("heap_v2/0\n  t*: 0: 0 [0: 0]\n"
                                   "@ 0x10 0x20\n  t*: 2: 200 [4: 400]\n"
                                   "@ 0x40\n  t*: 1: 100 [1: 100]\n"
                                   "@ 0x60\n  t*: 5: 500 [5: 500]\n\n" MAPS);
    struct profile *after = parse("heap_v2/0\n  t*: 0: 0 [0: 0]\n"
                                  "@ 0x60\n  t*: 5: 500 [5: 500]\n"
                                  "@ 0x10 0x20\n  t*: 3: 300 [6: 600]\n"
                                  "@ 0x10 0x21\n  t*: 1: 50 [1: 50]\n\n" MAPS);
    ck_assert_msg(before && after, "%s", err.msg);
    struct profile *d = profile_delta(before, after, &err);
    ck_assert_msg(d != NULL, "%s", err.msg);
    ck_assert_uint_eq(d->nstacks, 3);       /* 0x60, unchanged, left out */
    ck_assert_ptr_null(stack_at(d, 0x60));
    const struct profile_stack *a = NULL, *c = NULL;
    for (size_t i = 0; i < d->nstacks; i++) {
        const struct profile_stack *st = &d->stacks[i];
        if (st->nframes == 2 && profile_frame(d, st->frame0 + 1) == 0x20)
            a = st;
        if (st->nframes == 2 && profile_frame(d, st->frame0 + 1) == 0x21)
            c = st;
    }
    ck_assert_ptr_nonnull(a);
    ck_assert_double_eq(a->v.inuse_objects, 1);
    ck_assert_double_eq(a->v.inuse_bytes, 100);
    ck_assert_double_eq(a->v.alloc_objects, 2);
    ck_assert_double_eq(a->v.alloc_bytes, 200);
    ck_assert_ptr_nonnull(c);               /* only in after: as it is */
    ck_assert_double_eq(c->v.inuse_bytes, 50);
    const struct profile_stack *b = stack_at(d, 0x40);
    ck_assert_ptr_nonnull(b);               /* only in before: negated */
    ck_assert_double_eq(b->v.inuse_bytes, -100);
    ck_assert_double_eq(b->v.alloc_objects, -1);
    ck_assert_double_eq(d->total.inuse_bytes, 100 + 50 - 100);
    ck_assert(d->has_alloc);
    ck_assert_uint_eq(d->maps.n, after->maps.n);
    ck_assert_str_eq(d->maps.v[0].path, "/usr/bin/prog");
    profile_free(d);
    profile_free(before);
    profile_free(after);
}
END_TEST

static Suite *profile_suite(void)
{
    Suite *s = suite_create("profile");
    TCase *tc = tcase_create("unsample");
    tcase_add_test(tc, unsample_matches_hand_and_perl);
    tcase_add_test(tc, unsample_leaves_unsampled_pairs_alone);
    tcase_add_test(tc, unsample_v1);
    suite_add_tcase(s, tc);

    tc = tcase_create("heap_v2");
    tcase_add_test(tc, v2_structure);
    tcase_add_test(tc, v2_values_are_unsampled_per_line);
    tcase_add_test(tc, v2_cumulative_counts);
    tcase_add_test(tc, v2_period_one_and_zero);
    tcase_add_test(tc, v2_odd_stacks);
    tcase_add_test(tc, v2_address_lengths);
    tcase_add_test(tc, v2_stacks_sharing_frames);
    tcase_add_test(tc, v2_megabyte_line);
    tcase_add_test(tc, v2_many_threads);
    tcase_add_test(tc, v2_quick_thread_lines);
    suite_add_tcase(s, tc);

    tc = tcase_create("legacy");
    tcase_add_test(tc, legacy_heap_v2);
    tcase_add_test(tc, legacy_heap_v2_without_period_uses_128k);
    tcase_add_test(tc, legacy_heapprofile_is_not_sampled);
    tcase_add_test(tc, legacy_page_faults_are_known);
    tcase_add_test(tc, legacy_heap_n_uses_half_the_period);
    tcase_add_test(tc, legacy_without_type);
    tcase_add_test(tc, legacy_truncated);
    suite_add_tcase(s, tc);

    tc = tcase_create("truncated");
    tcase_add_test(tc, truncated_inside_a_stack);
    tcase_add_test(tc, truncated_mid_line);
    tcase_add_test(tc, truncated_after_blank_line_keeps_last_stack);
    tcase_add_test(tc, no_maps_section_keeps_every_stack);
    tcase_add_test(tc, header_only_is_valid);
    suite_add_tcase(s, tc);

    tc = tcase_create("errors");
    tcase_add_test(tc, errors_not_a_profile);
    tcase_add_test(tc, errors_header);
    tcase_add_test(tc, errors_stacks);
    tcase_add_test(tc, garbage_never_crashes);
    suite_add_tcase(s, tc);

    tc = tcase_create("files");
    tcase_add_test(tc, load_refuses_non_files);
    tcase_add_test(tc, load_huge_first_line);
    tcase_add_test(tc, object_ids_beside_the_file);
    tcase_add_test(tc, real_dump_unsampled);
    tcase_add_test(tc, real_dump_sampled);
    suite_add_tcase(s, tc);

    tc = tcase_create("delta");
    tcase_add_test(tc, delta_subtracts_matching_stacks);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(profile_suite)
