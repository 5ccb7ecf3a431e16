/* test_perf_record.c - the page-fault sampler's offline half: a perf
 * sample record read field by field (with and without PERIOD), records
 * whose sizes do not add up refused, and a copied stack walked with unwind
 * rows: to its outermost frame, stopped at a word outside the copy, at a
 * CFA that does not rise, and at the frame limit. */
#include <string.h>

#include "lib/elf/cfi_walk.h"
#include "lib/proc/perf_record.h"
#include "tests/unit/unit.h"

#define SP UINT64_C(0x7ffd0000)

struct rec { uint8_t b[512]; size_t n; };

static void put(struct rec *r, const void *p, size_t n)
{
    memcpy(r->b + r->n, p, n);
    r->n += n;
}
static void put64(struct rec *r, uint64_t v) { put(r, &v, 8); }

/* A sample: ip 0x1010 in user mode, tid 101, addr, [period 8], the three
 * registers, and `stack` as the copied stack. */
static struct rec sample(bool with_period, const uint64_t *stack, size_t words)
{
    struct rec r = {.n = 8};
    uint32_t ids[2] = {100, 101};
    put64(&r, 0x1010);
    put(&r, ids, sizeof ids);
    put64(&r, UINT64_C(0x7f0000001000));
    if (with_period)
        put64(&r, 8);
    put64(&r, 2);                              /* abi: 64-bit */
    put64(&r, 0);                              /* fp */
    put64(&r, SP);                             /* sp */
    put64(&r, 0x1010);                         /* pc */
    put64(&r, words * 8);
    put(&r, stack, words * 8);
    put64(&r, words * 8);
    uint32_t type = 9;
    uint16_t misc = 2, size = (uint16_t)r.n;
    memcpy(r.b, &type, 4);
    memcpy(r.b + 4, &misc, 2);
    memcpy(r.b + 6, &size, 2);
    return r;
}

START_TEST(reads_a_sample)
{
    uint64_t stack[4] = {0, 0x1234, 0, 0};
    for (int wp = 0; wp < 2; wp++) {
        struct rec r = sample(wp, stack, 4);
        struct perf_record p;
        ck_assert_int_eq(perf_record_parse(r.b, r.n, wp, &p), PERF_RECORD_KIND_SAMPLE);
        ck_assert_uint_eq(p.sample.ip, 0x1010);
        ck_assert_uint_eq(p.sample.tid, 101);
        ck_assert_uint_eq(p.sample.addr, UINT64_C(0x7f0000001000));
        ck_assert_uint_eq(p.sample.period, wp ? 8 : 0);
        ck_assert(p.sample.has_regs && !p.sample.kernel);
        ck_assert_uint_eq(p.sample.sp, SP);
        ck_assert_uint_eq(p.sample.stack_len, 32);
        ck_assert(memcmp(p.sample.stack, stack, 32) == 0);
        /* read with the other layout, the sizes no longer add up */
        ck_assert_int_eq(perf_record_parse(r.b, r.n, !wp, &p), PERF_RECORD_KIND_BAD);
    }
}
END_TEST

START_TEST(refuses_bad_sizes)
{
    uint64_t stack[4] = {0};
    struct rec r = sample(false, stack, 4);
    struct perf_record p;
    ck_assert_int_eq(perf_record_parse(r.b, r.n - 1, false, &p), PERF_RECORD_KIND_BAD);
    ck_assert_int_eq(perf_record_parse(r.b, 4, false, &p), PERF_RECORD_KIND_BAD);
    uint64_t huge = 1u << 20;                  /* the stack's size past the record */
    memcpy(r.b + r.n - 8 - 32 - 8, &huge, 8);
    ck_assert_int_eq(perf_record_parse(r.b, r.n, false, &p), PERF_RECORD_KIND_BAD);
    r = sample(false, stack, 4);
    memcpy(r.b + r.n - 8, &huge, 8);           /* dyn_size beyond size */
    ck_assert_int_eq(perf_record_parse(r.b, r.n, false, &p), PERF_RECORD_KIND_BAD);
}
END_TEST

START_TEST(reads_lost)
{
    struct rec r = {.n = 8};
    put64(&r, 1);
    put64(&r, 5);
    uint32_t type = 2;
    uint16_t size = (uint16_t)r.n;
    memcpy(r.b, &type, 4);
    memcpy(r.b + 6, &size, 2);
    struct perf_record p;
    ck_assert_int_eq(perf_record_parse(r.b, r.n, false, &p), PERF_RECORD_KIND_LOST);
    ck_assert_uint_eq(p.lost, 5);
}
END_TEST

/* Rows: code from 0x1000 has CFA = SP + 16, return address at CFA - 8. */
static struct cfi_rows rows_sp16(void)
{
    static struct cfi_row v[2] = {
        {.pc = 0x1000, .cfa_off = 16, .ra_off = -8, .cfa_reg = CFI_CFA_SP},
        {.pc = 0x9000, .cfa_reg = CFI_CFA_NONE},
    };
    return (struct cfi_rows){v, 2, 2};
}

START_TEST(walks_to_the_end)
{
    struct cfi_rows rows = rows_sp16();
    uint64_t stack[6] = {0, 0x2000, 0, 0x3000, 0, 0};
    struct cfi_stack st = {SP, (const uint8_t *)stack, sizeof stack};
    uint64_t f[8];
    bool trunc;
    size_t n = cfi_walk(&rows, 0x1010, SP, 0, &st, f, 8, &trunc);
    ck_assert_uint_eq(n, 3);
    ck_assert(!trunc);
    ck_assert_uint_eq(f[0], 0x1010);
    ck_assert_uint_eq(f[1], 0x2000);
    ck_assert_uint_eq(f[2], 0x3000);
}
END_TEST

START_TEST(stops_outside_the_copy_and_at_the_limit)
{
    struct cfi_rows rows = rows_sp16();
    uint64_t stack[4] = {0, 0x2000, 0, 0x3000};
    struct cfi_stack st = {SP, (const uint8_t *)stack, 3 * 8};   /* the last word cut */
    uint64_t f[8];
    bool trunc;
    ck_assert_uint_eq(cfi_walk(&rows, 0x1010, SP, 0, &st, f, 8, &trunc), 2);
    ck_assert(trunc);
    st.len = sizeof stack;
    ck_assert_uint_eq(cfi_walk(&rows, 0x1010, SP, 0, &st, f, 2, &trunc), 2);
    ck_assert(trunc);
    /* a stack copied from near the top of the address space: no wrap */
    st.base = UINT64_MAX - 8;
    ck_assert_uint_eq(cfi_walk(&rows, 0x1010, UINT64_MAX - 8, 0, &st, f, 8, &trunc), 1);
    ck_assert(trunc);
}
END_TEST

START_TEST(stops_when_the_cfa_does_not_rise)
{
    static struct cfi_row v[1] = {
        {.pc = 0x1000, .cfa_off = -16, .ra_off = 8, .cfa_reg = CFI_CFA_SP},
    };
    struct cfi_rows rows = {v, 1, 1};
    uint64_t stack[4] = {0x1010, 0x1010, 0x1010, 0x1010};
    struct cfi_stack st = {SP - 16, (const uint8_t *)stack, sizeof stack};
    uint64_t f[8];
    bool trunc;
    ck_assert_uint_eq(cfi_walk(&rows, 0x1010, SP, 0, &st, f, 8, &trunc), 1);
    ck_assert(trunc);
}
END_TEST

static Suite *perf_record_suite(void)
{
    Suite *s = suite_create("perf_record");
    TCase *tc = tcase_create("records");
    tcase_add_test(tc, reads_a_sample);
    tcase_add_test(tc, refuses_bad_sizes);
    tcase_add_test(tc, reads_lost);
    suite_add_tcase(s, tc);
    tc = tcase_create("walk");
    tcase_add_test(tc, walks_to_the_end);
    tcase_add_test(tc, stops_outside_the_copy_and_at_the_limit);
    tcase_add_test(tc, stops_when_the_cfa_does_not_rise);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(perf_record_suite)
