/* test_build_places.c - the places a build is looked for by its build-id:
 * a saved run's copy first, the debug directory's object and debug file,
 * and only while the process runs its own mapped file and debug directory;
 * places the target's user controls never followed through a final link;
 * and nothing at all for a build-id that is not plain hex (it becomes a
 * path). */
#include <string.h>

#include "lib/symbolize/build_places.h"
#include "tests/unit/unit.h"

#define ID "9d0c5d421d9f854498cbf996f3265c007b8a06d2"

START_TEST(offline_places_are_the_run_then_the_debug_directory)
{
    struct sym_build_query q = {.build_id = ID, .kept_dir = "/runs/r1", .debug_dir = "/dbg"};
    struct sym_build_place p[SYM_BUILD_PLACES_MAX];
    char looked[300];
    size_t n = sym_build_places(&q, p, looked, sizeof looked);
    ck_assert_uint_eq(n, 3);
    ck_assert_str_eq(p[0].path, "/runs/r1/.build-id/9d/0c5d421d9f854498cbf996f3265c007b8a06d2");
    ck_assert(p[0].nofollow && p[0].kept);
    ck_assert_str_eq(p[1].path, "/dbg/.build-id/9d/0c5d421d9f854498cbf996f3265c007b8a06d2");
    ck_assert_str_eq(p[2].path, "/dbg/.build-id/9d/0c5d421d9f854498cbf996f3265c007b8a06d2.debug");
    ck_assert(!p[1].kept && !p[2].kept);
    ck_assert_str_eq(looked, "the run directory /runs/r1, /dbg/.build-id");
    sym_build_places_free(p, n);
}
END_TEST

START_TEST(live_places_add_the_mapped_file_and_the_process_debug_directory)
{
    struct sym_build_query q = {.build_id = ID, .debug_dir = "/usr/lib/debug",
                                .root = "/proc/42/root", .pid = 42,
                                .start = 0x5000, .end = 0x6000};
    struct sym_build_place p[SYM_BUILD_PLACES_MAX];
    char looked[300];
    size_t n = sym_build_places(&q, p, looked, sizeof looked);
    ck_assert_uint_eq(n, 4);
    ck_assert_str_eq(p[2].path, "/proc/42/map_files/5000-6000");
    ck_assert_str_eq(p[3].path, "/proc/42/root/usr/lib/debug/.build-id/9d/"
                                "0c5d421d9f854498cbf996f3265c007b8a06d2.debug");
    ck_assert(p[3].nofollow);
    ck_assert_str_eq(looked, "/usr/lib/debug/.build-id, process 42's own files");
    sym_build_places_free(p, n);
}
END_TEST

START_TEST(a_build_id_that_is_not_hex_has_no_place)
{
    static const char *const bad[] = {"../../etc/passwd", "9d0c/../x", "9D0C", "abc", "", "ab"};
    struct sym_build_place p[SYM_BUILD_PLACES_MAX];
    char looked[100];
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        struct sym_build_query q = {.build_id = bad[i], .debug_dir = "/dbg"};
        ck_assert_uint_eq(sym_build_places(&q, p, looked, sizeof looked), 0);
    }
}
END_TEST

START_TEST(the_description_is_cut_not_overrun)
{
    struct sym_build_query q = {.build_id = ID, .kept_dir = "/a/very/long/run/directory/name",
                                .debug_dir = "/dbg"};
    struct sym_build_place p[SYM_BUILD_PLACES_MAX];
    char looked[16];
    size_t n = sym_build_places(&q, p, looked, sizeof looked);
    ck_assert_uint_eq(strlen(looked), sizeof looked - 1);
    sym_build_places_free(p, n);
}
END_TEST

static Suite *build_places_suite(void)
{
    Suite *s = suite_create("build_places");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, offline_places_are_the_run_then_the_debug_directory);
    tcase_add_test(tc, live_places_add_the_mapped_file_and_the_process_debug_directory);
    tcase_add_test(tc, a_build_id_that_is_not_hex_has_no_place);
    tcase_add_test(tc, the_description_is_cut_not_overrun);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(build_places_suite)
