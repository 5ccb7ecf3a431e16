/* test_glibc_chunk.c - the header of a chunk glibc mmapped on its own
 * (lib/mallinfo/glibc_chunk.c): prev_size 0, the size with IS_MMAPPED, a
 * whole number of pages that fits in its mapping; anything else is not;
 * a thread arena's top chunk, which ends where its heap ends. */
#include "tests/unit/unit.h"

#include "lib/mallinfo/glibc_chunk.h"

#define K 1024ull

START_TEST(mmapped_chunks)
{
    /* memcached's slab page: 1 MiB + a page, IS_MMAPPED (1052674) */
    uint64_t slab[2] = {0, 1028 * K | 2};
    ck_assert_uint_eq(glibc_mmapped_chunk_len(slab, 1028 * K), 1028 * K);
    ck_assert_uint_eq(glibc_mmapped_chunk_len(slab, 45232 * K), 1028 * K);  /* merged mappings */
    ck_assert_uint_eq(glibc_mmapped_chunk_len(slab, 1024 * K), 0);          /* does not fit */
}
END_TEST

START_TEST(not_chunks)
{
    uint64_t zero[2] = {0, 0};
    uint64_t arena_heap[2] = {0x7f0000000020, 0};      /* heap_info: ar_ptr first */
    uint64_t in_arena[2] = {0, 132 * K | 2 | 4};       /* NON_MAIN_ARENA */
    uint64_t prev_inuse[2] = {0, 132 * K | 2 | 1};     /* an arena chunk's bits */
    uint64_t not_mmapped[2] = {0, 132 * K};
    uint64_t not_pages[2] = {0, (132 * K + 16) | 2};
    uint64_t offset[2] = {4096, 132 * K | 2};          /* memalign's, past its start */
    uint64_t *bad[] = {zero, arena_heap, in_arena, prev_inuse, not_mmapped, not_pages, offset};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        ck_assert_uint_eq(glibc_mmapped_chunk_len(bad[i], 1 << 30), 0);
}
END_TEST

/* A thread arena's top: it ends where its heap's header says the heap ends */
START_TEST(thread_arena_top)
{
    uint64_t heap = 0x7f0000000000, size = 8 * 1024 * K, top = heap + 0x1f30;
    ck_assert_uint_eq(glibc_top_chunk_len(top, (size - 0x1f30) | 1, heap, size), size - 0x1f30);
    ck_assert_uint_eq(glibc_top_chunk_len(top, (size - 0x2000) | 1, heap, size), 0); /* short */
    ck_assert_uint_eq(glibc_top_chunk_len(top, (size - 0x1f30) | 2, heap, size), 0); /* mmapped */
    ck_assert_uint_eq(glibc_top_chunk_len(heap - 16, size + 16, heap, size), 0);     /* outside */
    ck_assert_uint_eq(glibc_top_chunk_len(heap + size, 0, heap, size), 0);
    ck_assert_uint_eq(glibc_top_chunk_len(top, 1, heap, UINT64_MAX), 0);             /* wraps */
}
END_TEST

static Suite *chunk_suite(void)
{
    Suite *s = suite_create("glibc_chunk");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, mmapped_chunks);
    tcase_add_test(tc, not_chunks);
    tcase_add_test(tc, thread_arena_top);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(chunk_suite)
