/* test_threads.c - attach/threads: /proc/.../syscall parsing and the
 * ranking of candidate threads. */
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>

#include "attach/threads.h"
#include "tests/unit/unit.h"

static struct thread_info thread(pid_t tid, const char *comm, char state, const char *sys)
{
    struct thread_info t = { .tid = tid, .state = state };
    strcpy(t.comm, comm);
    thread_parse_syscall(sys, &t);
    t.rank = thread_rank(&t);
    return t;
}

START_TEST(parses_syscall_file)
{
    struct thread_info t = thread(1, "a", 'S', "202 0x7f 0x80 0x0 0x0 0x0 0x0 0x7ffd 0x7f12\n");
    ck_assert(t.in_syscall);
    ck_assert_int_eq(t.syscall_nr, 202);
    t = thread(1, "a", 'R', "running\n");
    ck_assert(!t.in_syscall);
    t = thread(1, "a", 'S', "-1 0x7ffd 0x7f12\n");
    ck_assert(!t.in_syscall);
    ck_assert_uint_eq(t.sp, 0x7ffd);
    ck_assert_uint_eq(t.pc, 0x7f12);
    t = thread(1, "a", 'S', "0 0x3 0x7ffd1000 0x100 0x0 0x0 0x0 0x7ffd0f00 0x7f0012\n");
    ck_assert_uint_eq(t.sp, 0x7ffd0f00);   /* the stack and ip to return to */
    ck_assert_uint_eq(t.pc, 0x7f0012);
    t = thread(1, "a", 'R', "running\n");
    ck_assert_uint_eq(t.sp, 0);
}
END_TEST

START_TEST(ranks_threads)
{
    char futex[64], epoll[64], read_[64], sigwait[64], clone_[64];
    snprintf(futex, sizeof futex, "%d 0 0 0 0 0 0 0 0", SYS_futex);
    snprintf(epoll, sizeof epoll, "%d 0 0 0 0 0 0 0 0", SYS_epoll_wait);
    snprintf(read_, sizeof read_, "%d 0 0 0 0 0 0 0 0", SYS_read);
    snprintf(sigwait, sizeof sigwait, "%d 0 0 0 0 0 0 0 0", SYS_rt_sigtimedwait);
    snprintf(clone_, sizeof clone_, "%d 0 0 0 0 0 0 0 0", SYS_clone);
    struct thread_info v[] = {
        thread(10, "jemalloc_bg_thd", 'S', futex),
        thread(11, "eventloop", 'S', epoll),
        thread(12, "busy", 'R', "running"),
        thread(13, "sigwaiter", 'S', sigwait),
        thread(14, "reader", 'S', read_),
        thread(15, "worker", 'S', futex),
        thread(16, "ioctl", 'S', "16 0 0 0 0 0 0 0 0"),
        thread(9, "forker", 'D', clone_),     /* a fork copying a large map */
    };
    threads_sort(v, 8);
    pid_t order[] = { 14, 15, 16, 12, 11, 13, 9, 10 };
    for (int i = 0; i < 8; i++)
        ck_assert_int_eq(v[i].tid, order[i]);
    ck_assert_int_eq(v[0].rank, RANK_RESTARTABLE_SLEEP);
    ck_assert_int_eq(v[6].rank, RANK_NEW_TASK);
    ck_assert_int_eq(v[7].rank, RANK_ALLOCATOR_THREAD);
}
END_TEST

/* A thread that blocks a fault signal goes after the others of its rank,
 * never before a better rank. */
START_TEST(fault_signal_blockers_last_of_their_rank)
{
    char futex[64], epoll[64];
    snprintf(futex, sizeof futex, "%d 0 0 0 0 0 0 0 0", SYS_futex);
    snprintf(epoll, sizeof epoll, "%d 0 0 0 0 0 0 0 0", SYS_epoll_wait);
    struct thread_info v[] = {
        thread(20, "main", 'S', futex),
        thread(21, "worker", 'S', futex),
        thread(22, "blocker", 'S', futex),
        thread(23, "eventloop", 'S', epoll),
    };
    v[0].blocks_fault_signal = v[2].blocks_fault_signal = true;
    threads_sort(v, 4);
    pid_t order[] = { 21, 20, 22, 23 };
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(v[i].tid, order[i]);
}
END_TEST

START_TEST(reads_blocked_fault_signals)
{
    ck_assert(!thread_status_blocks_fault_signal("Name:\tx\nSigBlk:\t0000000000000000\n"));
    /* SIGUSR1 (bit 9) and SIGRTMIN+3 blocked: no fault signal */
    ck_assert(!thread_status_blocks_fault_signal("Name:\tx\nSigBlk:\t0000000400000200\n"));
    /* SIGSEGV: bit 10 */
    ck_assert(thread_status_blocks_fault_signal("Name:\tx\nSigBlk:\t0000000000000400\n"));
    /* SIGSYS: bit 30; SIGTRAP: bit 4 */
    ck_assert(thread_status_blocks_fault_signal("Name:\tx\nSigBlk:\t0000000040000000\n"));
    ck_assert(thread_status_blocks_fault_signal("Name:\tx\nSigBlk:\t0000000000000010\n"));
    ck_assert(!thread_status_blocks_fault_signal("Name:\tx\nSigPnd:\t0000000000000400\n"));
    ck_assert(!thread_status_blocks_fault_signal("Name:\tx\nSigBlk:\tzz\n"));
    ck_assert(!thread_status_blocks_fault_signal(""));
}
END_TEST

static Suite *threads_suite(void)
{
    Suite *s = suite_create("threads");
    TCase *tc = tcase_create("rank");
    tcase_add_test(tc, parses_syscall_file);
    tcase_add_test(tc, ranks_threads);
    tcase_add_test(tc, fault_signal_blockers_last_of_their_rank);
    tcase_add_test(tc, reads_blocked_fault_signals);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(threads_suite)
