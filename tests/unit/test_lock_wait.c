/* test_lock_wait.c - /proc/PID/task/TID/syscall read as a wait on a
 * mutex (attach/lock_wait.c): FUTEX_WAIT, private or not, on a word
 * holding 2 is one, its address taken; any other call, command or value,
 * a thread running or in no call, text cut short, are not. */
#include "tests/unit/unit.h"

#include <stdio.h>
#include <sys/syscall.h>

#include "attach/lock_wait.h"

static bool parse(const char *fmt, long nr, uint64_t *word)
{
    char text[256];
    snprintf(text, sizeof text, fmt, nr);
    return lock_wait_parse(text, word);
}

START_TEST(futex_wait_on_a_locked_mutex)
{
    uint64_t w = 0;
    ck_assert(parse("%ld 0x7f460bad85a0 0x80 0x2 0x0 0x0 0x0 0x7f460abfe2d0 0x7f460b6a9f56",
                    SYS_futex, &w));
    ck_assert_uint_eq(w, 0x7f460bad85a0);
    ck_assert(parse("%ld 0x55f4f2242120 0x0 0x2 0x0 0x0 0x0 0x7ffc 0x7f46", SYS_futex, &w));
    ck_assert_uint_eq(w, 0x55f4f2242120);
}
END_TEST

START_TEST(anything_else_is_not)
{
    uint64_t w = 0;
    /* a condition variable's wait (another value), a wake, a bitset wait */
    ck_assert(!parse("%ld 0x7f460bad85a0 0x80 0x0 0x0 0x0 0x0 0x1 0x2", SYS_futex, &w));
    ck_assert(!parse("%ld 0x7f460bad85a0 0x81 0x2 0x0 0x0 0x0 0x1 0x2", SYS_futex, &w));
    ck_assert(!parse("%ld 0x7f460bad85a0 0x89 0x2 0x0 0x0 0x0 0x1 0x2", SYS_futex, &w));
    /* another call; running; in no call; cut short; no address */
    ck_assert(!parse("%ld 0x3 0x7ffd 0x100 0x0 0x0 0x0 0x1 0x2", SYS_read, &w));
    ck_assert(!lock_wait_parse("running", &w));
    ck_assert(!lock_wait_parse("-1 0x7ffc 0x7f46", &w));
    ck_assert(!parse("%ld 0x7f460bad85a0 0x80", SYS_futex, &w));
    ck_assert(!parse("%ld 0x0 0x80 0x2 0x0 0x0 0x0 0x1 0x2", SYS_futex, &w));
    ck_assert(!lock_wait_parse("", &w));
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("lock_wait");
    TCase *tc = tcase_create("parse");
    tcase_add_test(tc, futex_wait_on_a_locked_mutex);
    tcase_add_test(tc, anything_else_is_not);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(suite)
