/* test_jemalloc_version.c - jemalloc's version string parsed (it comes from
 * the target) and the behaviours memprof decides by version: which
 * versions lose the threads that ran with profiling off (5.2), which have
 * prof_recent and prof.prefix (5.3). */
#include <string.h>

#include "allocator/jemalloc/version.h"
#include "tests/unit/unit.h"

static struct jemalloc_version parsed(const char *text)
{
    struct jemalloc_version v;
    jemalloc_version_parse(text, strlen(text) + 1, &v);
    return v;
}

START_TEST(parses_releases_and_builds)
{
    struct jemalloc_version v = parsed("5.2.1-0-gea6b3e973b477b8061e0076bb257dbd7f3faa756");
    ck_assert(v.known);
    ck_assert_uint_eq(v.major, 5);
    ck_assert_uint_eq(v.minor, 2);
    ck_assert_uint_eq(v.patch, 1);
    ck_assert_uint_eq(v.commits, 0);
    v = parsed("5.3.0-0-g54eaed1d8b56b1aa528be3bdd1877e59c56fa90c");
    ck_assert(v.known && v.minor == 3 && v.patch == 0);
    v = parsed("5.2.1-123-gabcdef");
    ck_assert(v.known && v.commits == 123);
    v = parsed("4.5.0");
    ck_assert(v.known && v.major == 4 && v.minor == 5);
    char buf[64];
    jemalloc_version_text(&v, buf, sizeof buf);
    ck_assert_str_eq(buf, "4.5.0");
    v = parsed("5.2.1-21-g9e031c1d");
    jemalloc_version_text(&v, buf, sizeof buf);
    ck_assert_str_eq(buf, "5.2.1-21");
}
END_TEST

START_TEST(refuses_what_is_no_version)
{
    const char *bad[] = {
        "", "5", "5.2", "5.2.", "5..1", "x.2.1", "5.2.1x", "5.2.1-", "5.2.1-g12",
        "-5.2.1", " 5.2.1", "1234567890.0.0", "5.2.1-1234567890-g0",
        "0.0.0-0-g0000000000000000000000000000000000000000",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        struct jemalloc_version v = parsed(bad[i]);
        ck_assert_msg(!v.known, "'%s' read as a version", bad[i]);
    }
    struct jemalloc_version v;
    ck_assert(!jemalloc_version_parse(NULL, 10, &v));
    /* bounded by len: "5.2.1" cut at "5.2" is no version */
    ck_assert(!jemalloc_version_parse("5.2.1", 3, &v));
    ck_assert(jemalloc_version_parse("5.2.1garbage", 5, &v) && v.patch == 1);
    char buf[64];
    jemalloc_version_text(&v, buf, sizeof buf);
    ck_assert_str_eq(buf, "5.2.1");
    jemalloc_version_parse("nonsense", 8, &v);
    jemalloc_version_text(&v, buf, sizeof buf);
    ck_assert_str_eq(buf, "of unknown version");
}
END_TEST

/* From the fast path's commit (5.1.0-89) to its fix (5.2.1-21): both
 * faults of that fast path. */
START_TEST(which_lose_inactive_threads)
{
    const char *lose[] = {"5.2.0-0-g0", "5.2.1-0-gea6b3e9", "5.2.1-20-g0043e68d",
                          "5.1.0-89-g0f831365"};
    const char *keep[] = {"5.1.0-0-g0", "5.1.0-88-g0", "5.2.1-21-g9e031c1d",
                          "5.3.0-0-g54eaed1", "4.5.0-0-g0", "6.0.0-0-g0", "nonsense"};
    for (size_t i = 0; i < sizeof lose / sizeof *lose; i++) {
        struct jemalloc_version v = parsed(lose[i]);
        ck_assert_msg(jemalloc_inactive_threads_stop_sampling(&v), "%s", lose[i]);
        ck_assert_msg(jemalloc_small_sizes_read_high(&v), "%s", lose[i]);
    }
    for (size_t i = 0; i < sizeof keep / sizeof *keep; i++) {
        struct jemalloc_version v = parsed(keep[i]);
        ck_assert_msg(!jemalloc_inactive_threads_stop_sampling(&v), "%s", keep[i]);
        ck_assert_msg(!jemalloc_small_sizes_read_high(&v), "%s", keep[i]);
    }
}
END_TEST

START_TEST(names_of_5_3)
{
    struct jemalloc_version v = parsed("5.2.1-0-gea6b3e9");
    ck_assert(!jemalloc_has_prof_recent(&v) && !jemalloc_has_prof_prefix(&v));
    v = parsed("5.3.0-0-g54eaed1");
    ck_assert(jemalloc_has_prof_recent(&v) && jemalloc_has_prof_prefix(&v));
    v = parsed("5.2.1-500-g0");     /* a development build between */
    ck_assert(jemalloc_has_prof_recent(&v) && !jemalloc_has_prof_prefix(&v));
    v = parsed("nonsense");
    ck_assert(!jemalloc_has_prof_recent(&v) && !jemalloc_has_prof_prefix(&v));
    ck_assert_int_lt(jemalloc_version_cmp(&(struct jemalloc_version){.known = true, .major = 5,
                     .minor = 2, .patch = 1}, 5, 3, 0, 0), 0);
}
END_TEST

static Suite *jemalloc_version_suite(void)
{
    Suite *s = suite_create("jemalloc_version");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, parses_releases_and_builds);
    tcase_add_test(tc, refuses_what_is_no_version);
    tcase_add_test(tc, which_lose_inactive_threads);
    tcase_add_test(tc, names_of_5_3);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(jemalloc_version_suite)
