/* test_glibc_heaps.c - glibc's arenas tied to their heaps
 * (lib/mallinfo/glibc_heaps.c): heaps grouped by the arena they claim, a
 * group counted only when one of its heaps holds the arena, tied to
 * malloc_info's arena of the same system bytes; and the aligned anonymous
 * mappings of an smaps text (lib/proc/smaps_aligned.c). */
#include "tests/unit/unit.h"

#include <string.h>

#include "lib/mallinfo/glibc_heaps.h"
#include "lib/proc/smaps_aligned.h"

#define M (1ull << 20)
#define H GLIBC_HEAP_ALIGN

static struct glibc_arena_info arenas[4] = {
    {.nr = 0, .system_current = 132 * 1024},
    {.nr = 1, .system_current = 8 * M},
    {.nr = 2, .system_current = 3 * M},      /* two heaps: 2 + 1 MiB */
    {.nr = 3, .system_current = 8 * M},
};

START_TEST(tied_by_size)
{
    struct glibc_malloc_info mi = {.arenas = arenas, .narenas = 4};
    struct glibc_heap h[] = {
        /* arena A (8 MiB): its first heap holds it */
        {.start = 10 * H, .end = 10 * H + 8 * M, .rss = 7 * M, .read = true,
         .ar_ptr = 10 * H + 32, .size = 8 * M},
        /* arena B: two heaps, the second claims B too */
        {.start = 12 * H, .end = 12 * H + 2 * M, .rss = 2 * M, .read = true,
         .ar_ptr = 12 * H + 32, .size = 2 * M},
        {.start = 13 * H, .end = 13 * H + 1 * M, .rss = 1 * M / 2, .read = true,
         .ar_ptr = 12 * H + 32, .size = 1 * M},
        /* arena C (8 MiB too) */
        {.start = 14 * H, .end = 14 * H + 8 * M, .rss = 6 * M, .read = true,
         .ar_ptr = 14 * H + 32, .size = 8 * M},
        /* claims an arena none of its heaps holds: not a heap */
        {.start = 16 * H, .end = 16 * H + 4 * M, .rss = 4 * M, .read = true,
         .ar_ptr = 0x1234, .size = 4 * M},
        /* size beyond its mapping: not a heap */
        {.start = 17 * H, .end = 17 * H + 1 * M, .rss = M, .read = true,
         .ar_ptr = 17 * H + 32, .size = 2 * M},
        /* unreadable */
        {.start = 18 * H, .end = 18 * H + 1 * M, .rss = M},
    };
    struct glibc_heaps_result r;
    ck_assert_int_eq(glibc_heaps_match(h, 7, &mi, true, 8192, &r), 0);
    ck_assert(r.arena[0].measured);
    ck_assert_uint_eq(r.arena[0].resident, 8192);
    /* equal sizes tie in order: arena 1 the group at the lower address */
    ck_assert(r.arena[1].measured && r.arena[3].measured);
    ck_assert_uint_eq(r.arena[1].resident + r.arena[3].resident, 13 * M);
    ck_assert(r.arena[2].measured);
    ck_assert_uint_eq(r.arena[2].resident, 2 * M + M / 2);
    ck_assert_uint_eq(r.arena[2].heaps, 2);
    ck_assert_uint_eq(r.unmatched, 0);
    ck_assert_uint_eq(r.nstarts, 4);
    glibc_heaps_result_free(&r);
}
END_TEST

START_TEST(unmatched_and_no_brk)
{
    struct glibc_malloc_info mi = {.arenas = arenas, .narenas = 2};
    struct glibc_heap h[] = {
        {.start = 10 * H, .end = 10 * H + 5 * M, .rss = 5 * M, .read = true,
         .ar_ptr = 10 * H + 32, .size = 5 * M},
    };
    struct glibc_heaps_result r;
    ck_assert_int_eq(glibc_heaps_match(h, 1, &mi, false, 0, &r), 0);
    ck_assert(!r.arena[0].measured);
    ck_assert(!r.arena[1].measured);    /* 8 MiB wanted, 5 found */
    ck_assert_uint_eq(r.unmatched, 1);
    ck_assert_uint_eq(r.unmatched_rss, 5 * M);
    glibc_heaps_result_free(&r);
    ck_assert_int_eq(glibc_heaps_match(NULL, 0, &mi, true, 4096, &r), 0);
    ck_assert(r.arena[0].measured && !r.arena[1].measured);
    glibc_heaps_result_free(&r);
}
END_TEST

static const char smaps[] =
    "55d0c1000000-55d0c1100000 rw-p 00000000 00:00 0 [heap]\n"
    "Rss:                 512 kB\n"
    "7f0004000000-7f0004800000 rw-p 00000000 00:00 0 \n"
    "Rss:                4096 kB\n"
    "7f0004800000-7f0008000000 ---p 00000000 00:00 0 \n"
    "Rss:                   0 kB\n"
    "7f0008000000-7f0008100000 r--p 00000000 fe:00 12 /usr/lib/x.so\n"
    "Rss:                  64 kB\n"
    "7f000c000000-7f000c100000 rw-s 00000000 00:01 0 \n"
    "Rss:                  64 kB\n"
    "7f000c101000-7f000c200000 rw-p 00000000 00:00 0 \n"
    "Rss:                  64 kB\n"
    "7f0010000000-7f0010001000 rw-p 00000000 00:00 0 \n"
    "Rss:   zz\n"
    "7f0014000000-7f0014000000 rw-p 00000000 00:00 0 \n"    /* empty: a hostile text's */
    "Rss:                   4 kB\n";

START_TEST(aligned_maps)
{
    struct smaps_aligned a;
    ck_assert_int_eq(smaps_aligned_read(smaps, sizeof smaps - 1, H, &a), 0);
    ck_assert(a.have_brk);
    ck_assert_uint_eq(a.brk_rss, 512 * 1024);
    ck_assert_uint_eq(a.n, 2);
    ck_assert_uint_eq(a.v[0].start, 0x7f0004000000);
    ck_assert_uint_eq(a.v[0].rss, 4096 * 1024);
    ck_assert_uint_eq(a.v[1].start, 0x7f0010000000);
    ck_assert_uint_eq(a.v[1].rss, 0);
    smaps_aligned_free(&a);
    ck_assert_int_eq(smaps_aligned_read(smaps, 60, H, &a), 0);   /* cut */
    ck_assert(a.have_brk && a.n == 0);
    smaps_aligned_free(&a);
    ck_assert_int_eq(smaps_aligned_read(smaps, sizeof smaps - 1, 3, &a), 0);  /* not a power of two */
    ck_assert(!a.have_brk && a.n == 0);
    smaps_aligned_free(&a);
}
END_TEST

static Suite *heaps_suite(void)
{
    Suite *s = suite_create("glibc_heaps");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, tied_by_size);
    tcase_add_test(tc, unmatched_and_no_brk);
    tcase_add_test(tc, aligned_maps);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(heaps_suite)
