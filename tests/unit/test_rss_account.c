/* test_rss_account.c - where RSS is (lib/proc/rss_account.c): every
 * mapping of an smaps text in one part, the parts adding up to the RSS;
 * stacks by the threads' stack pointers and by layout; memprof's sampler
 * region; shared memory; files by path; glibc's arena heaps, not stacks;
 * every mapping kept with its part; and the stack pointer of a thread's
 * syscall file. */
#include "tests/unit/unit.h"

#include <string.h>

#include "lib/proc/rss_account.h"

static const char smaps[] =
    "55d0c0000000-55d0c0001000 r-xp 00000000 fe:00 12 /usr/bin/app\n"
    "Rss:                   4 kB\n"
    "Swap:                  0 kB\n"
    "55d0c0001000-55d0c0002000 r--p 00001000 fe:00 12 /usr/bin/app\n"
    "Rss:                   4 kB\n"
    "55d0c1000000-55d0c1100000 rw-p 00000000 00:00 0 [heap]\n"
    "Rss:                 512 kB\n"
    "7f0000000000-7f0000400000 rw-p 00000000 00:00 0 \n"
    "Rss:                4096 kB\n"
    "AnonHugePages:      2048 kB\n"
    "LazyFree:             64 kB\n"
    "Swap:                 16 kB\n"
    "7f1000000000-7f1000001000 ---p 00000000 00:00 0 \n"
    "Rss:                   0 kB\n"
    "7f1000001000-7f1000101000 rw-p 00000000 00:00 0 \n"
    "Rss:                  64 kB\n"
    "7f1000101000-7f1000102000 ---p 00000000 00:00 0 \n"
    "Rss:                   0 kB\n"
    "7f1000102000-7f1000202000 rw-p 00000000 00:00 0 \n"
    "Rss:                  32 kB\n"
    "7f2000000000-7f2000010000 rw-s 00000000 00:01 77 /dev/shm/seg\n"
    "Rss:                  40 kB\n"
    "7f2000010000-7f2000020000 rw-s 00000000 00:01 78 /memfd:memprof-sampler (deleted)\n"
    "Rss:                   8 kB\n"
    "7f2000020000-7f2000030000 r-xp 00000000 fe:00 44 /usr/lib/libc.so.6\n"
    "Rss:                 100 kB\n"
    "7ffc00000000-7ffc00021000 rw-p 00000000 00:00 0 [stack]\n"
    "Rss:                  20 kB\n"
    "7ffc00100000-7ffc00102000 r-xp 00000000 00:00 0 [vdso]\n"
    "Rss:                   8 kB\n";

START_TEST(parts_add_up)
{
    /* one thread's sp in the first guarded stack, the main thread's in [stack] */
    const uint64_t sps[] = {0x7ffc00010000, 0x7f1000050000};
    struct rss_account a;
    ck_assert_int_eq(rss_account_smaps(smaps, sizeof smaps - 1, sps, 2, &a), 0);
    ck_assert_uint_eq(a.rss, (4 + 4 + 512 + 4096 + 64 + 32 + 40 + 8 + 100 + 20 + 8) * 1024ull);
    ck_assert_uint_eq(a.thread_stacks, 64 * 1024);
    ck_assert_uint_eq(a.stacks_seen, 1);
    ck_assert_uint_eq(a.unseen_stacks, 32 * 1024);   /* above a guard, no sp in it */
    ck_assert_uint_eq(a.main_stack, 20 * 1024);
    ck_assert_uint_eq(a.anon, (512 + 4096) * 1024);  /* [heap] and the anonymous mmap */
    ck_assert_uint_eq(a.shared, 40 * 1024);
    ck_assert_uint_eq(a.sampler, 8 * 1024);
    ck_assert_uint_eq(a.other, 8 * 1024);
    ck_assert_uint_eq(a.anon_huge, 2048 * 1024);
    ck_assert_uint_eq(a.lazyfree, 64 * 1024);
    ck_assert_uint_eq(a.swap, 16 * 1024);
    ck_assert_uint_eq(a.nfiles, 2);
    ck_assert_str_eq(a.files[0].path, "/usr/bin/app");
    ck_assert_uint_eq(a.files[0].rss, 8 * 1024);
    ck_assert_str_eq(a.files[1].path, "/usr/lib/libc.so.6");
    uint64_t sum = a.sampler + a.main_stack + a.thread_stacks + a.unseen_stacks + a.anon +
                   a.shared + a.other + a.files[0].rss + a.files[1].rss;
    ck_assert_uint_eq(sum, a.rss);
    rss_account_free(&a);
    /* no sp at all: both thread stacks are told by their layout */
    ck_assert_int_eq(rss_account_smaps(smaps, sizeof smaps - 1, NULL, 0, &a), 0);
    ck_assert_uint_eq(a.thread_stacks, 0);
    ck_assert_uint_eq(a.unseen_stacks, (64 + 32) * 1024);
    rss_account_free(&a);
}
END_TEST

START_TEST(cut_and_odd)
{
    struct rss_account a;
    /* a cut text: the second mapping's Rss line is cut before its number,
     * so only the first's counts */
    ck_assert_int_eq(rss_account_smaps(smaps, 200, NULL, 0, &a), 0);
    ck_assert_uint_eq(a.rss, 4 * 1024);
    ck_assert_uint_eq(a.nfiles, 1);
    rss_account_free(&a);
    const char *odd = "Rss: 5 kB\n7f00-7f01 rw-p 0 00:00 0\nRss: lots kB\nRss:  99999999999999999999 kB\n";
    ck_assert_int_eq(rss_account_smaps(odd, strlen(odd), NULL, 0, &a), 0);
    ck_assert_uint_eq(a.rss, 0);
    rss_account_free(&a);
    ck_assert_int_eq(rss_account_smaps("", 0, NULL, 0, &a), 0);
    ck_assert_uint_eq(a.rss, 0);
    rss_account_free(&a);
}
END_TEST

/* glibc's thread arenas: 64 MiB-aligned heaps, writable from their start,
 * the next one's PROT_NONE rest just below: not stacks.  Every mapping is
 * kept with its part. */
START_TEST(arena_heaps_and_maps)
{
    static const char text[] =
        "7f5e2c000000-7f5e2d000000 rw-p 00000000 00:00 0 \n"
        "Rss:               16384 kB\n"
        "7f5e2d000000-7f5e30000000 ---p 00000000 00:00 0 \n"
        "Rss:                   0 kB\n"
        "7f5e30000000-7f5e31000000 rw-p 00000000 00:00 0 \n"
        "Rss:               16384 kB\n"
        "7f5e31000000-7f5e34000000 ---p 00000000 00:00 0 \n"
        "Rss:                   0 kB\n"
        "7f5e34000000-7f5e34001000 r--p 00000000 fe:00 9 /etc/x\n"
        "Rss:                   4 kB\n";
    struct rss_account a;
    ck_assert_int_eq(rss_account_smaps(text, sizeof text - 1, NULL, 0, &a), 0);
    ck_assert_uint_eq(a.unseen_stacks, 0);
    ck_assert_uint_eq(a.anon, 2 * 16384 * 1024ull);
    ck_assert_uint_eq(a.nmaps, 5);
    ck_assert_uint_eq(a.maps[2].start, 0x7f5e30000000);
    ck_assert_uint_eq(a.maps[2].rss, 16384 * 1024ull);
    ck_assert_int_eq(a.maps[2].part, RSS_PART_ANON);
    ck_assert_int_eq(a.maps[4].part, RSS_PART_FILE);
    ck_assert_str_eq(a.maps[4].path, "/etc/x");
    rss_account_free(&a);
}
END_TEST

START_TEST(syscall_sp)
{
    uint64_t sp = 0;
    const char *in_call = "270 0xfb 0x7fff7be59f20 0x0 0x0 0x7fff7be59e30 0x7fff7be59e40 "
                          "0x7fff7be59e00 0x7f5ed0b7faec\n";
    ck_assert_int_eq(rss_syscall_sp(in_call, strlen(in_call), &sp), 1);
    ck_assert_uint_eq(sp, 0x7fff7be59e00);
    ck_assert_int_eq(rss_syscall_sp("-1 0x7ffd1000 0x401000\n", 23, &sp), 1);
    ck_assert_uint_eq(sp, 0x7ffd1000);
    ck_assert_int_eq(rss_syscall_sp("running\n", 8, &sp), 0);
    ck_assert_int_eq(rss_syscall_sp("-1 0x0 0x401000\n", 16, &sp), 0);
    ck_assert_int_eq(rss_syscall_sp("-1 zz 0x401000\n", 15, &sp), 0);
    ck_assert_int_eq(rss_syscall_sp("1 2 3 4 5 6 7 8 9 10 11\n", 24, &sp), 0);
    ck_assert_int_eq(rss_syscall_sp("", 0, &sp), 0);
}
END_TEST

/* A mapping known to hold the heap (a glibc thread arena's, just above
 * another heap's reserve) is anonymous memory, not a stack. */
START_TEST(heap_not_stack)
{
    const uint64_t heaps[] = {0x7f1000102000, 0x1000};
    struct rss_account a;
    ck_assert_int_eq(rss_account_smaps_heaps(smaps, sizeof smaps - 1, NULL, 0, heaps, 2, &a), 0);
    ck_assert_uint_eq(a.unseen_stacks, 64 * 1024);   /* the other one */
    ck_assert_uint_eq(a.anon, (512 + 4096 + 32) * 1024);
    size_t heaps_marked = 0;       /* the named heaps are marked so, and only they */
    for (size_t i = 0; i < a.nmaps; i++)
        if (a.maps[i].heap) {
            ck_assert(a.maps[i].start == heaps[0] || a.maps[i].start == heaps[1]);
            heaps_marked++;
        }
    ck_assert_uint_ge(heaps_marked, 1);
    rss_account_free(&a);
}
END_TEST

static Suite *rss_suite(void)
{
    Suite *s = suite_create("rss_account");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, parts_add_up);
    tcase_add_test(tc, cut_and_odd);
    tcase_add_test(tc, arena_heaps_and_maps);
    tcase_add_test(tc, syscall_sp);
    tcase_add_test(tc, heap_not_stack);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(rss_suite)
