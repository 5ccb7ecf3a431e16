/* test_procmem.c - the parsers of the kernel's memory files (lib/proc/procmem.c):
 * "Key: N kB" lines, stat's fault counters past a hostile command name,
 * the cgroup v2 and v1 lines, cgroup limits, pressure (PSI) lines, and
 * smaps grouped like pmap -x. */
#include "tests/unit/unit.h"

#include <string.h>

#include "lib/proc/environ.h"
#include "lib/proc/procmem.h"

static bool field(const char *text, const char *key, uint64_t *v)
{
    return procmem_field(text, strlen(text), key, v);
}

START_TEST(fields)
{
    const char *status = "Name:\tx\nVmHWM:\t  109336 kB\nVmRSS:\t    5300 kB\nThreads:\t2\n";
    uint64_t v = 0;
    ck_assert(field(status, "VmHWM", &v));
    ck_assert_uint_eq(v, 109336ull * 1024);
    ck_assert(field(status, "Threads", &v));
    ck_assert_uint_eq(v, 2);
    ck_assert(!field(status, "VmSwap", &v));
    ck_assert(!field(status, "Vm", &v));          /* a prefix is not a key */
    ck_assert(!field("Rss: lots kB\n", "Rss", &v));
    ck_assert(!field("Rss: 99999999999999999999 kB\n", "Rss", &v));
    ck_assert(!field("Rss: 18014398509481984 kB\n", "Rss", &v));  /* overflows in bytes */
    /* memory.events: "key N" */
    const char *events = "low 0\nhigh 0\nmax 0\noom 2\noom_kill 1\n";
    ck_assert(field(events, "oom", &v));
    ck_assert_uint_eq(v, 2);
    ck_assert(field(events, "oom_kill", &v));
    ck_assert_uint_eq(v, 1);
    /* cut text: no newline at the end, or nothing after the key */
    ck_assert(field("Pss: 12 kB", "Pss", &v));
    ck_assert_uint_eq(v, 12 * 1024);
    ck_assert(!field("Pss:", "Pss", &v));
}
END_TEST

START_TEST(stat_faults)
{
    uint64_t mi = 0, ma = 0;
    const char *stat = "722 (known heap) S 1 722 1 0 -1 4194560 26858 0 3 0 10 20";
    ck_assert(procmem_stat_faults(stat, strlen(stat), &mi, &ma));
    ck_assert_uint_eq(mi, 26858);
    ck_assert_uint_eq(ma, 3);
    /* a command name holding ") S 1 2 3" cannot shift the fields */
    const char *evil = "9 (x) S 1 2 3 4 5 6 7 8 9) S 1 722 1 0 -1 0 41 0 7 0";
    ck_assert(procmem_stat_faults(evil, strlen(evil), &mi, &ma));
    ck_assert_uint_eq(mi, 41);
    ck_assert_uint_eq(ma, 7);
    ck_assert(!procmem_stat_faults("9 (x) S 1 2", 11, &mi, &ma));
    ck_assert(!procmem_stat_faults("no paren", 8, &mi, &ma));
}
END_TEST

static bool limit(const char *text, uint64_t *v, bool *unlimited)
{
    return procmem_cgroup_limit(text, strlen(text), v, unlimited);
}

START_TEST(cgroup_limit)
{
    uint64_t v;
    bool un;
    ck_assert(limit("max\n", &v, &un) && un);
    ck_assert(limit("134217728\n", &v, &un) && !un);
    ck_assert_uint_eq(v, 134217728);
    ck_assert(limit("9223372036854771712\n", &v, &un) && un);     /* v1: no limit */
    ck_assert(limit("0", &v, &un) && !un && v == 0);
    ck_assert(!limit("", &v, &un));
    ck_assert(!limit("maximum\n", &v, &un));
    ck_assert(!limit("12 kB\n", &v, &un));
    ck_assert(!limit("-1\n", &v, &un));
    ck_assert(!limit("99999999999999999999\n", &v, &un));
}
END_TEST

START_TEST(psi)
{
    const char *text = "some avg10=1.25 avg60=0.40 avg300=0.08 total=123456\n"
                       "full avg10=0.00 avg60=0.00 avg300=0.00 total=99\n";
    struct procmem_psi p;
    ck_assert(procmem_psi_line(text, strlen(text), "some", &p));
    ck_assert(p.avg10 > 1.249 && p.avg10 < 1.251);
    ck_assert(p.avg60 > 0.399 && p.avg60 < 0.401);
    ck_assert(p.avg300 > 0.079 && p.avg300 < 0.081);
    ck_assert_uint_eq(p.total_us, 123456);
    ck_assert(procmem_psi_line(text, strlen(text), "full", &p));
    ck_assert_uint_eq(p.total_us, 99);
    ck_assert(!procmem_psi_line(text, strlen(text), "som", &p));
    const char *cut = "some avg10=1.25 avg60=0.40 avg300=0.08 tot";
    ck_assert(!procmem_psi_line(cut, strlen(cut), "some", &p));
    const char *order = "some avg60=0.40 avg10=1.25 avg300=0.08 total=1\n";
    ck_assert(!procmem_psi_line(order, strlen(order), "some", &p));
    const char *huge = "some avg10=999999999 avg60=0 avg300=0 total=1\n";
    ck_assert(!procmem_psi_line(huge, strlen(huge), "some", &p));
}
END_TEST

static const char smaps[] =
    "55d0c0000000-55d0c0001000 r-xp 00000000 fe:00 12 /usr/bin/app\n"
    "Rss:                   4 kB\n"
    "Private_Dirty:         0 kB\n"
    "Swap:                  0 kB\n"
    "VmFlags: rd ex mr mw me\n"
    "7f0000000000-7f0000400000 rw-p 00000000 00:00 0 \n"
    "Rss:                4096 kB\n"
    "Shared_Dirty:          8 kB\n"
    "Private_Dirty:      4000 kB\n"
    "Swap:                 12 kB\n"
    "7f0000400000-7f0000401000 ---p 00000000 00:00 0 \n"
    "Rss:                   0 kB\n"
    "7f0000401000-7f0000c01000 rw-p 00000000 00:00 0 \n"
    "Rss:                  16 kB\n"
    "Private_Dirty:        16 kB\n"
    "7f1000000000-7f1000001000 r--p 00000000 fe:00 13 /usr/lib/libc.so.6\n"
    "Rss:                   4 kB\n"
    "7f1000001000-7f1000002000 r-xp 00001000 fe:00 13 /usr/lib/libc.so.6\n"
    "Rss:                   4 kB\n"
    "Private_Dirty:         4 kB\n"
    "7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0 [stack]\n"
    "Rss:                  12 kB\n";

static const struct procmem_group *find(const struct procmem_groups *g, const char *name)
{
    for (size_t i = 0; i < g->n; i++)
        if (strcmp(g->v[i].name, name) == 0)
            return &g->v[i];
    return NULL;
}

START_TEST(smaps_groups)
{
    struct procmem_groups g;
    ck_assert_int_eq(procmem_smaps_groups(smaps, strlen(smaps), &g), 0);
    const struct procmem_group *anon = find(&g, "anonymous");
    ck_assert_ptr_nonnull(anon);
    ck_assert_int_eq(anon->kind, PROCMEM_ANON);
    ck_assert_uint_eq(anon->mappings, 1);
    ck_assert_uint_eq(anon->rss, 4096 * 1024);
    ck_assert_uint_eq(anon->dirty, 4008 * 1024);
    ck_assert_uint_eq(anon->swap, 12 * 1024);
    /* above a PROT_NONE guard: a thread stack, with [stack] */
    const struct procmem_group *stacks = find(&g, "stacks");
    ck_assert_ptr_nonnull(stacks);
    ck_assert_uint_eq(stacks->mappings, 2);
    ck_assert_uint_eq(stacks->rss, 28 * 1024);
    const struct procmem_group *libc = find(&g, "/usr/lib/libc.so.6");
    ck_assert_ptr_nonnull(libc);
    ck_assert_uint_eq(libc->mappings, 2);
    ck_assert_uint_eq(libc->rss, 8 * 1024);
    ck_assert_uint_eq(libc->dirty, 4 * 1024);
    ck_assert_ptr_nonnull(find(&g, "/usr/bin/app"));
    ck_assert_ptr_nonnull(find(&g, "guards"));
    procmem_groups_free(&g);
    /* fields before any mapping header are ignored */
    ck_assert_int_eq(procmem_smaps_groups("Rss: 4 kB\n", 10, &g), 0);
    ck_assert_uint_eq(g.n, 0);
    procmem_groups_free(&g);
}
END_TEST

START_TEST(environ_value)
{
    /* as /proc/PID/environ has it; the last entry cut without its NUL */
    static const char env[] = "TMPDIRX=/no\0TMPDIR=/first\0MALLOC_CONF=prof:true\0"
                              "TMPDIR=/second\0=odd\0LAST=cu";
    size_t len = sizeof env - 1;
    ck_assert_str_eq(proc_environ_value(env, len, "TMPDIR"), "/first");
    ck_assert_str_eq(proc_environ_value(env, len, "MALLOC_CONF"), "prof:true");
    ck_assert_ptr_null(proc_environ_value(env, len, "TMPDI"));
    ck_assert_ptr_null(proc_environ_value(env, len, "HOME"));
    ck_assert_int_eq(memcmp(proc_environ_value(env, len, "LAST"), "cu", 2), 0);
    ck_assert_ptr_null(proc_environ_value(env, len - 3, "LAST"));   /* "LAS" */
    ck_assert_ptr_null(proc_environ_value(env, 0, "TMPDIR"));
}
END_TEST

static Suite *procmem_suite(void)
{
    Suite *s = suite_create("procmem");
    TCase *tc = tcase_create("parsers");
    tcase_add_test(tc, fields);
    tcase_add_test(tc, stat_faults);
    tcase_add_test(tc, cgroup_limit);
    tcase_add_test(tc, psi);
    tcase_add_test(tc, smaps_groups);
    tcase_add_test(tc, environ_value);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(procmem_suite)
