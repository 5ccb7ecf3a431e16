/* test_attach_rseq.c - the rseq rule of a remote call: a thread whose
 * instruction pointer lies in [start_ip, start_ip + post_commit_offset) of
 * its current critical section must not be moved; outside it may be. */
#include <stdint.h>

#include "attach/remote_call.h"
#include "tests/unit/unit.h"

START_TEST(inside_is_start_inclusive_end_exclusive)
{
    ck_assert(remote_rseq_ip_inside(0x1000, 0x1000, 0x20));   /* first byte */
    ck_assert(remote_rseq_ip_inside(0x101f, 0x1000, 0x20));   /* last byte */
    ck_assert(!remote_rseq_ip_inside(0x1020, 0x1000, 0x20));  /* the commit point */
    ck_assert(!remote_rseq_ip_inside(0x0fff, 0x1000, 0x20));  /* just before */
}
END_TEST

START_TEST(empty_section_holds_nothing)
{
    ck_assert(!remote_rseq_ip_inside(0x1000, 0x1000, 0));
}
END_TEST

START_TEST(no_wraparound)
{
    /* ip far below start must not wrap into the range... */
    ck_assert(!remote_rseq_ip_inside(0x10, UINT64_MAX - 0x10, 0x40));
    /* ...and a section ending at the top of the address space still works. */
    ck_assert(remote_rseq_ip_inside(UINT64_MAX - 1, UINT64_MAX - 0x10, 0x10));
    ck_assert(!remote_rseq_ip_inside(UINT64_MAX, UINT64_MAX - 0x10, 0x10));
}
END_TEST

static Suite *rseq_suite(void)
{
    Suite *s = suite_create("attach_rseq");
    TCase *tc = tcase_create("range");
    tcase_add_test(tc, inside_is_start_inclusive_end_exclusive);
    tcase_add_test(tc, empty_section_holds_nothing);
    tcase_add_test(tc, no_wraparound);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(rseq_suite)
