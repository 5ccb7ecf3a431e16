/* test_memory_diagnose.c - the diagnoses' pure part
 * (session/memory_diagnose.c and its causes): what each cause makes of
 * given figures, their order (largest bytes first), what is left out
 * (unknown figures, too small, a running thread's stack), the JSON form,
 * and the text with the target's strings escaped; and the zero pages of a
 * block (session/thp_scan.c). */
#include "tests/unit/unit.h"

#include <stdio.h>
#include <string.h>

#include "session/memory_diagnose.h"
#include "session/thp_scan.h"

#define MIB ((uint64_t)1 << 20)

START_TEST(ranked_largest_first)
{
    struct rss_account rss = {.rss = 600 * MIB, .unseen_stacks = 8 * MIB, .lazyfree = 2 * MIB};
    struct jemalloc_summary je = {.stats = true, .pages = true, .dirty = 40 * MIB,
                                  .muzzy = 5 * MIB};
    struct diagnose_jemalloc_settings set = {.background_thread = false, .dirty_decay_ms = 10000};
    struct cgroup_memory cg = {.current = 500 * MIB, .max = 512 * MIB, .ev_oom_kill = 2,
                               .ev_max = CGROUP_ABSENT, .ev_high = CGROUP_ABSENT,
                               .ev_oom = CGROUP_ABSENT, .ev_oom_group_kill = CGROUP_ABSENT,
                               .under_oom = CGROUP_ABSENT};
    strcpy(cg.where.memory.path, "/app");
    struct diagnose_input in = {.rss = &rss, .threads = 4, .threads_with_sp = 4, .je = &je,
                                .je_set = &set, .cg = &cg, .thp_mode = "always",
                                .thp = {.known = true, .huge = 100 * MIB, .scanned = 100 * MIB,
                                        .zero = 90 * MIB}};
    struct memory_diagnoses d;
    ck_assert_int_eq(memory_diagnose(&in, &d), 0);
    ck_assert_uint_eq(d.n, 4);
    ck_assert_str_eq(d.v[0].key, "cgroup_near_limit");
    ck_assert_uint_eq(d.v[0].bytes, 500 * MIB);
    ck_assert_str_eq(d.v[1].key, "thp_inflation");
    ck_assert_str_eq(d.v[2].key, "jemalloc_unpurged");
    ck_assert_uint_eq(d.v[2].bytes, 42 * MIB);      /* muzzy no more than LazyFree */
    ck_assert_str_eq(d.v[3].key, "exited_thread_stacks");
    ck_assert_ptr_nonnull(strstr(d.v[0].cause, "/app"));
    ck_assert_ptr_nonnull(strstr(d.v[0].cause, "oom_kill 2"));
    ck_assert_ptr_nonnull(strstr(d.v[0].remedy, "memory.max"));
    ck_assert_ptr_nonnull(strstr(d.v[1].remedy, "echo madvise >"));
    ck_assert_ptr_nonnull(strstr(d.v[2].cause, "background_thread is off"));
    ck_assert_ptr_nonnull(strstr(d.v[2].remedy, "'purge'"));
    ck_assert_ptr_nonnull(strstr(d.v[3].remedy, "40 MiB"));
    ck_assert_uint_eq(memory_diagnoses_key(&d, "thp_inflation"), 90 * MIB);
    memory_diagnoses_free(&d);
}
END_TEST

/* Nothing measured, nothing said; a cgroup far from its limit, a running
 * thread (its stack may be the stack-like one) and small figures neither. */
START_TEST(only_what_is_measured)
{
    struct diagnose_input none = {0};
    struct memory_diagnoses d;
    ck_assert_int_eq(memory_diagnose(&none, &d), 0);
    ck_assert_uint_eq(d.n, 0);
    memory_diagnoses_free(&d);
    struct rss_account rss = {.unseen_stacks = 30 * MIB};
    struct jemalloc_summary je = {.stats = true, .pages = false, .dirty = 40 * MIB};
    struct cgroup_memory cg = {.current = 100 * MIB, .max = 512 * MIB, .ev_max = 0,
                               .ev_high = CGROUP_ABSENT, .ev_oom_kill = 0,
                               .under_oom = CGROUP_ABSENT};
    struct diagnose_input in = {.rss = &rss, .threads = 5, .threads_with_sp = 4, .je = &je,
                                .cg = &cg, .thp = {.known = true, .zero = MIB / 2}};
    ck_assert_int_eq(memory_diagnose(&in, &d), 0);
    ck_assert_uint_eq(d.n, 0);
    memory_diagnoses_free(&d);
    cg.max_unlimited = true;
    cg.current = 600 * MIB;
    ck_assert_int_eq(memory_diagnose(&in, &d), 0);
    ck_assert_uint_eq(d.n, 0);
    memory_diagnoses_free(&d);
}
END_TEST

START_TEST(glibc_and_tcmalloc)
{
    struct glibc_arena_info arenas[3] = {
        {.nr = 0, .rest_bytes = 2 * MIB}, {.nr = 1, .rest_bytes = 30 * MIB, .fast_bytes = MIB},
        {.nr = 2, .rest_bytes = 10 * MIB},
    };
    struct allocator_stats st = {.have_glibc = true, .glibc = {.arenas = arenas, .narenas = 3}};
    struct diagnose_input in = {.other = &st, .cpus = 2, .threads = 3};
    struct memory_diagnoses d;
    ck_assert_int_eq(memory_diagnose(&in, &d), 0);
    ck_assert_uint_eq(d.n, 1);
    ck_assert_str_eq(d.v[0].key, "glibc_arenas_free");
    ck_assert_uint_eq(d.v[0].bytes, 43 * MIB);
    ck_assert_ptr_nonnull(strstr(d.v[0].cause, "3 arenas hold 43.0 MiB"));
    ck_assert_ptr_nonnull(strstr(d.v[0].cause, "arena 1 31.0 MiB, arena 2 10.0 MiB, arena 0 2.0 MiB"));
    ck_assert_ptr_nonnull(strstr(d.v[0].remedy, "at most 43.0 MiB"));
    ck_assert_ptr_nonnull(strstr(d.v[0].remedy, "MALLOC_ARENA_MAX=2"));
    memory_diagnoses_free(&d);
    struct allocator_stats tc = {0};
    allocator_stats_add(&tc, "tcmalloc.pageheap_free_bytes", 281 * MIB);
    struct diagnose_input tin = {.other = &tc, .tcmalloc = true};
    ck_assert_int_eq(memory_diagnose(&tin, &d), 0);
    ck_assert_uint_eq(d.n, 1);
    ck_assert_str_eq(d.v[0].key, "tcmalloc_pageheap_free");
    ck_assert_ptr_nonnull(strstr(d.v[0].remedy, "ReleaseFreeMemory"));
    memory_diagnoses_free(&d);
}
END_TEST

/* Matched by overlap and path; the heap and stacks left out; the largest
 * DIAGNOSE_GROWING_MAX named. */
/* An anonymous mapping grown by mmap calls the kernel merged into it
 * starts lower at the next read: what it held before is still its own
 * (the growth is 24 MiB, not its whole 40), and two neighbours it
 * swallowed count together. */
START_TEST(growing_merged_mapping)
{
    struct rss_mapping before[] = {
        {.start = 0x30000000, .end = 0x31000000, .rss = 10 * MIB, .part = RSS_PART_ANON},
        {.start = 0x31000000, .end = 0x31800000, .rss = 6 * MIB, .part = RSS_PART_FILE,
         .path = "/data/c"},
        {.start = 0x31800000, .end = 0x32000000, .rss = 6 * MIB, .part = RSS_PART_ANON},
    };
    struct rss_mapping now[] = {
        {.start = 0x2e000000, .end = 0x31000000, .rss = 34 * MIB, .part = RSS_PART_ANON},
        {.start = 0x31000000, .end = 0x31800000, .rss = 6 * MIB, .part = RSS_PART_FILE,
         .path = "/data/c"},
        {.start = 0x31800000, .end = 0x32000000, .rss = 6 * MIB, .part = RSS_PART_ANON},
    };
    struct rss_account rss = {.maps = now, .nmaps = 3};
    struct diagnose_input in = {.rss = &rss, .prev = before, .nprev = 3, .prev_seconds = 2};
    struct memory_diagnoses d;
    ck_assert_int_eq(memory_diagnose(&in, &d), 0);
    ck_assert_uint_eq(d.n, 1);
    ck_assert_uint_eq(d.v[0].bytes, 24 * MIB);
    ck_assert_ptr_nonnull(strstr(d.v[0].cause, "the anonymous mapping (0x2e000000-0x31000000) "
                                 "grew by 24.0 MiB"));
    ck_assert_ptr_nonnull(strstr(d.v[0].remedy, "'faults SECONDS'"));
    memory_diagnoses_free(&d);
    /* one mapping that swallowed two of the previous read's */
    struct rss_mapping merged[] = {
        {.start = 0x2f000000, .end = 0x34000000, .rss = 20 * MIB, .part = RSS_PART_ANON},
    };
    struct rss_mapping two[] = {
        {.start = 0x30000000, .end = 0x31000000, .rss = 10 * MIB, .part = RSS_PART_ANON},
        {.start = 0x32000000, .end = 0x33000000, .rss = 4 * MIB, .part = RSS_PART_ANON},
    };
    struct rss_account rss2 = {.maps = merged, .nmaps = 1};
    struct diagnose_input in2 = {.rss = &rss2, .prev = two, .nprev = 2, .prev_seconds = 2};
    ck_assert_int_eq(memory_diagnose(&in2, &d), 0);
    ck_assert_uint_eq(d.n, 1);
    ck_assert_uint_eq(d.v[0].bytes, 6 * MIB);
    memory_diagnoses_free(&d);
}
END_TEST

START_TEST(growing_mappings)
{
    struct rss_mapping before[] = {
        {.start = 0x1000, .end = 0x9000000, .rss = 1 * MIB, .part = RSS_PART_FILE, .path = "/data/a"},
        {.start = 0x10000000, .end = 0x20000000, .rss = 0, .part = RSS_PART_ANON, .brk = true,
         .path = "[heap]"},
        {.start = 0x30000000, .end = 0x40000000, .rss = 5 * MIB, .part = RSS_PART_ANON},
    };
    struct rss_mapping now[] = {
        {.start = 0x1000, .end = 0x9000000, .rss = 33 * MIB, .part = RSS_PART_FILE, .path = "/data/a"},
        {.start = 0x10000000, .end = 0x20000000, .rss = 90 * MIB, .part = RSS_PART_ANON,
         .brk = true, .path = "[heap]"},
        {.start = 0x30000000, .end = 0x40000000, .rss = 7 * MIB, .part = RSS_PART_ANON},
        {.start = 0x50000000, .end = 0x50100000, .rss = 3 * MIB, .part = RSS_PART_THREAD_STACK},
        {.start = 0x60000000, .end = 0x61000000, .rss = 4 * MIB, .part = RSS_PART_ANON},
        {.start = 0x70000000, .end = 0x71000000, .rss = 6 * MIB, .part = RSS_PART_FILE,
         .path = "/data/b\x1b[2J"},
    };
    struct rss_account rss = {.maps = now, .nmaps = 6};
    struct diagnose_input in = {.rss = &rss, .prev = before, .nprev = 3, .prev_seconds = 2};
    struct memory_diagnoses d;
    ck_assert_int_eq(memory_diagnose(&in, &d), 0);
    ck_assert_uint_eq(d.n, 3);
    ck_assert_uint_eq(d.v[0].bytes, 32 * MIB);
    ck_assert_ptr_nonnull(strstr(d.v[0].cause, "the file mapping /data/a (0x1000-0x9000000) "
                                 "grew by 32.0 MiB in 2.0 s"));
    ck_assert_uint_eq(d.v[1].bytes, 6 * MIB);
    ck_assert_uint_eq(d.v[2].bytes, 4 * MIB);
    ck_assert_ptr_nonnull(strstr(d.v[2].cause, "the anonymous mapping (0x60000000-0x61000000)"));
    /* the text escapes the target's path; the JSON keeps its bytes */
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    memory_diagnoses_text(f, &d);
    fclose(f);
    ck_assert_ptr_null(strchr(text, '\x1b'));
    ck_assert_ptr_nonnull(strstr(text, "diagnoses (largest first)\n        32.0 MiB  a growing "
                                       "mapping: the file mapping /data/a"));
    free(text);
    json_object *o = json_object_new_object();
    memory_diagnoses_json(o, &d);
    json_object *arr = json_object_object_get(o, "diagnoses"), *e1 = json_object_array_get_idx(arr, 1);
    ck_assert_uint_eq(json_object_array_length(arr), 3);
    ck_assert_ptr_nonnull(strchr(json_object_get_string(json_object_object_get(e1, "cause")), '\x1b'));
    ck_assert_str_eq(json_object_get_string(json_object_object_get(e1, "key")), "growing_mapping");
    json_object_put(o);
    memory_diagnoses_free(&d);
}
END_TEST

START_TEST(zero_pages)
{
    static unsigned char block[2 << 20];
    memset(block, 0, sizeof block);
    ck_assert_uint_eq(thp_zero_bytes(block, sizeof block), 2 << 20);
    block[0] = 1;
    block[(1 << 20) + 4095] = 1;
    ck_assert_uint_eq(thp_zero_bytes(block, sizeof block), (2 << 20) - 2 * 4096);
}
END_TEST

static Suite *diagnose_suite(void)
{
    Suite *s = suite_create("memory_diagnose");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, ranked_largest_first);
    tcase_add_test(tc, only_what_is_measured);
    tcase_add_test(tc, glibc_and_tcmalloc);
    tcase_add_test(tc, growing_mappings);
    tcase_add_test(tc, growing_merged_mapping);
    tcase_add_test(tc, zero_pages);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(diagnose_suite)
