/* test_session_lock.c - attach/session_lock: the lock's name and its
 * behaviour on a real process (this one): a second taker is refused with
 * the holder's pid, the name is free again once the holder lets go, and a
 * held lock survives refused takers queueing on it. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "attach/session_lock.h"
#include "tests/unit/unit.h"

START_TEST(names_the_process_identity)
{
    char a[128], b[128];
    session_lock_name(4026531836u, 1, 12345, a, sizeof a);
    ck_assert_str_eq(a, "memprof-session/4026531836/1/12345");
    /* the same pid started later (pid reuse) is another process */
    session_lock_name(4026531836u, 1, 12346, b, sizeof b);
    ck_assert_str_ne(a, b);
    /* the same pid in another pid namespace is another process */
    session_lock_name(4026532000u, 1, 12345, b, sizeof b);
    ck_assert_str_ne(a, b);
}
END_TEST

START_TEST(one_holder_at_a_time)
{
    pid_t me = getpid();
    char dir[64], want[128];
    struct mp_error err;
    snprintf(dir, sizeof dir, "/proc/%d", (int)me);
    int fd = session_lock_take(me, dir, &err);
    ck_assert_int_ge(fd, 0);
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(session_lock_take(me, dir, &err), SESSION_LOCK_HELD);
        snprintf(want, sizeof want, "already being inspected by memprof (pid %d, user ",
                 (int)me);
        ck_assert_ptr_nonnull(strstr(err.msg, want));
        session_lock_drain(fd);
    }
    session_lock_release(fd);
    fd = session_lock_take(me, dir, &err);
    ck_assert_int_ge(fd, 0);
    session_lock_release(fd);
}
END_TEST

START_TEST(fails_without_the_process)
{
    struct mp_error err;
    ck_assert_int_eq(session_lock_take(0x3fffffff, "/proc/1073741823", &err),
                     SESSION_LOCK_FAILED);
    ck_assert_ptr_nonnull(strstr(err.msg, "cannot read the identity of process"));
}
END_TEST

static Suite *session_lock_suite(void)
{
    Suite *s = suite_create("session_lock");
    TCase *tc = tcase_create("lock");
    tcase_add_test(tc, names_the_process_identity);
    tcase_add_test(tc, one_holder_at_a_time);
    tcase_add_test(tc, fails_without_the_process);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(session_lock_suite)
