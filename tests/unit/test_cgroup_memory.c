/* test_cgroup_memory.c - a process's cgroup memory figures
 * (lib/proc/cgroup_memory.c) read from fixture trees standing in for a
 * host's /sys/fs/cgroup (tests/fixtures/cgroup/): a cgroup v2-only
 * (unified) host, a v2 hierarchy without the memory controller, a legacy
 * v1 host and a hybrid one (v1's memory
 * controller, v2's pressure), each found from a mountinfo naming the
 * fixture as the mount and a /proc/PID/cgroup text, as on such a host;
 * and hostile contents (numbers that overflow or end in letters, a
 * symbolic link, a directory, a NUL, files past the read bound, PSI lines
 * that are not numbers), which leave their figures absent. */
#include "tests/unit/unit.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/proc/cgroup_memory.h"
#include "lib/proc/cgroup_memory_dir.h"

#define MIB (UINT64_C(1) << 20)

static char fixtures[512];

static void setup(void)
{
    const char *src = getenv("SRCDIR");
    snprintf(fixtures, sizeof fixtures, "%s/tests/fixtures/cgroup", src ? src : ".");
}

/* A mountinfo line mounting fixture tree `tree` (as cgroup2, or as cgroup
 * v1 with `opts`) at its own path. */
static void mount_line(char *buf, size_t len, const char *tree, bool v2)
{
    size_t used = strlen(buf);
    snprintf(buf + used, len - used, "%zu 1 0:%zu / %s/%s rw,relatime - %s %s rw%s\n",
             used + 30, used + 40, fixtures, tree, v2 ? "cgroup2" : "cgroup",
             v2 ? "cgroup2" : "cgroup", v2 ? ",nsdelegate" : ",memory");
}

/* Locate and read as cgroup_memory_read does, the mount being a fixture. */
static int read_fixture(const char *mountinfo, const char *cgroup, struct cgroup_memory *c,
                        char *why)
{
    struct cgroup_mounts m;
    cgroup_mounts_parse(mountinfo, strlen(mountinfo), &m);
    memset(c, 0, sizeof *c);
    if (!cgroup_memory_locate(cgroup, strlen(cgroup), &m, &c->where, why, 512))
        return -2;
    char path[256 + CGROUP_PATH_MAX + 2];
    snprintf(path, sizeof path, "%s/%s", c->where.memory.mount, c->where.memory.rel);
    int fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
    ck_assert_msg(fd >= 0, "%s", path);
    int pfd = -1;
    if (c->where.has_pressure) {
        snprintf(path, sizeof path, "%s/%s", c->where.pressure.mount, c->where.pressure.rel);
        pfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        ck_assert_msg(pfd >= 0, "%s", path);
    }
    int top = -1;
    if (c->where.memory.version == CGROUP_V2) {
        top = open(c->where.memory.mount, O_PATH | O_DIRECTORY | O_CLOEXEC);
        ck_assert_msg(top >= 0, "%s", c->where.memory.mount);
    }
    int rc = cgroup_memory_read_dirs(c, fd, pfd, top, why, 512);
    close(fd);
    if (pfd >= 0)
        close(pfd);
    if (top >= 0)
        close(top);
    return rc;
}

START_TEST(v2_only_host)
{
    char mi[2048] = "", why[512];
    mount_line(mi, sizeof mi, "v2", true);
    struct cgroup_memory c;
    ck_assert_int_eq(read_fixture(mi, "0::/system.slice/redis.service\n", &c, why), 0);
    ck_assert_int_eq(c.where.memory.version, CGROUP_V2);
    ck_assert_str_eq(c.where.memory.rel, "system.slice/redis.service");
    ck_assert_uint_eq(c.current, 70 * MIB);
    ck_assert_uint_eq(c.max, 256 * MIB);
    ck_assert(!c.max_unlimited);
    ck_assert(c.high_unlimited);
    ck_assert_uint_eq(cgroup_memory_headroom(&c), 186 * MIB);
    ck_assert_uint_eq(c.anon, 50 * MIB);
    ck_assert_uint_eq(c.file, 10 * MIB);
    ck_assert_uint_eq(c.ev_max, 12);
    ck_assert_uint_eq(c.ev_oom, 2);
    ck_assert_uint_eq(c.ev_oom_kill, 1);
    ck_assert_uint_eq(c.ev_oom_group_kill, 0);
    ck_assert_uint_eq(c.under_oom, CGROUP_ABSENT);      /* v1 only */
    ck_assert(c.has_pressure && c.has_full);
    ck_assert_double_eq_tol(c.some.avg10, 1.20, 1e-9);
    ck_assert_uint_eq(c.some.total_us, 123456);
    ck_assert_uint_eq(c.full.total_us, 45678);
    /* the root cgroup: pressure, but no memory.current and no limit */
    ck_assert_int_eq(read_fixture(mi, "0::/\n", &c, why), -1);
    ck_assert_msg(strstr(why, "the process is in the root cgroup"), "%s", why);
    ck_assert(c.has_pressure);
    ck_assert_uint_eq(c.some.total_us, 999);
    /* a v1 line beside it (a v2 host reports none, but the text is the
     * process's): ignored, there is no v1 memory mount */
    ck_assert_int_eq(read_fixture(mi, "4:memory:/x\n0::/system.slice/redis.service\n",
                                  &c, why), 0);
    ck_assert_int_eq(c.where.memory.version, CGROUP_V2);
    /* a cgroup without memory files in a hierarchy that has the controller:
     * not enabled by its parent */
    ck_assert_int_eq(read_fixture(mi, "0::/system.slice\n", &c, why), -1);
    ck_assert_msg(strstr(why, "not enabled in its parent's cgroup.subtree_control"), "%s", why);
}
END_TEST

START_TEST(v2_without_memory_controller)
{
    /* cgroup2 alone in view, its hierarchy without the memory controller
     * (a hybrid host's v2, mounted by itself: t_memory_cgroup_v2_view.sh) */
    char mi[2048] = "", why[512];
    mount_line(mi, sizeof mi, "v2-nomemory", true);
    struct cgroup_memory c;
    ck_assert_int_eq(read_fixture(mi, "4:memory:/x\n0::/memprof-test\n", &c, why), -1);
    ck_assert_msg(strstr(why, "has none (its cgroup.controllers does not list memory"),
                  "%s", why);
    ck_assert(c.has_pressure);
    ck_assert_uint_eq(c.some.total_us, 4242);
}
END_TEST

START_TEST(v1_legacy_host)
{
    char mi[2048] = "", why[512];
    mount_line(mi, sizeof mi, "v1/memory", false);
    struct cgroup_memory c;
    ck_assert_int_eq(read_fixture(mi, "5:memory:/process_api/ab\n3:cpu:/\n", &c, why), 0);
    ck_assert_int_eq(c.where.memory.version, CGROUP_V1);
    ck_assert(!c.where.has_pressure);
    ck_assert_uint_eq(c.current, 70 * MIB);
    ck_assert(c.max_unlimited);              /* 9223372036854771712 */
    ck_assert_uint_eq(cgroup_memory_headroom(&c), CGROUP_ABSENT);
    ck_assert_uint_eq(c.anon, 50 * MIB);     /* total_rss */
    ck_assert_uint_eq(c.file, 10 * MIB);     /* total_cache */
    ck_assert_uint_eq(c.ev_max, 3);          /* memory.failcnt */
    ck_assert_uint_eq(c.ev_oom_kill, 1);
    ck_assert_uint_eq(c.under_oom, 0);
    ck_assert_uint_eq(c.ev_oom, CGROUP_ABSENT);
    ck_assert_uint_eq(c.high, CGROUP_ABSENT);
    ck_assert(!c.has_pressure);
}
END_TEST

START_TEST(hybrid_host)
{
    char mi[2048] = "", why[512];
    mount_line(mi, sizeof mi, "hybrid/memory", false);
    mount_line(mi, sizeof mi, "hybrid/unified", true);
    struct cgroup_memory c;
    ck_assert_int_eq(read_fixture(mi, "5:memory:/process_api/ab\n0::/x.slice\n", &c, why), 0);
    ck_assert_int_eq(c.where.memory.version, CGROUP_V1);
    ck_assert_uint_eq(c.max, 256 * MIB);
    ck_assert_uint_eq(cgroup_memory_headroom(&c), 186 * MIB);
    ck_assert(c.where.has_pressure);
    ck_assert(c.has_pressure && !c.has_full);
    ck_assert_uint_eq(c.some.total_us, 777);
}
END_TEST

START_TEST(hostile_contents)
{
    char mi[2048] = "", why[512];
    mount_line(mi, sizeof mi, "hostile", true);
    struct cgroup_memory c;
    /* "12abc", an overflowing limit, a directory for memory.high, a link
     * to /etc/passwd for memory.stat: nothing is taken from any */
    ck_assert_int_eq(read_fixture(mi, "0::/evil\n", &c, why), -1);
    ck_assert_msg(strstr(why, "no memory controller in") && strstr(why, "hostile/evil"),
                  "%s", why);
    ck_assert_uint_eq(c.current, CGROUP_ABSENT);
    ck_assert_uint_eq(c.max, CGROUP_ABSENT);
    ck_assert_uint_eq(c.high, CGROUP_ABSENT);
    ck_assert_uint_eq(c.anon, CGROUP_ABSENT);
    ck_assert_uint_eq(c.file, CGROUP_ABSENT);
    /* negative, 2^64, no value, hex, a letter first, after a NUL */
    ck_assert_uint_eq(c.ev_low, CGROUP_ABSENT);
    ck_assert_uint_eq(c.ev_high, CGROUP_ABSENT);
    ck_assert_uint_eq(c.ev_max, CGROUP_ABSENT);
    ck_assert_uint_eq(c.ev_oom_kill, CGROUP_ABSENT);
    ck_assert_uint_eq(c.ev_oom, 0);     /* "0x10": the decimal digits only, never 16 */
    ck_assert_uint_eq(c.ev_oom_group_kill, CGROUP_ABSENT);     /* its line starts with NUL */
    /* PSI of nan, inf, 1e999 and a negative total; "full" with nothing */
    ck_assert(!c.has_pressure && !c.has_full);
    /* past the 64 KiB read bound: a 100000-digit usage is not a number;
     * an events file whose oom_kill line lies beyond the bound has none */
    ck_assert_int_eq(read_fixture(mi, "0::/long\n", &c, why), -1);
    ck_assert_uint_eq(c.current, CGROUP_ABSENT);
    ck_assert(c.max_unlimited);         /* "max" without its newline */
    ck_assert_uint_eq(c.ev_oom_kill, CGROUP_ABSENT);
    /* a cgroup path that climbs out of the fixture is refused before any open */
    ck_assert_int_eq(read_fixture(mi, "0::/../v2/system.slice\n", &c, why), -2);
    ck_assert_msg(strstr(why, "outside memprof's own cgroup namespace"), "%s", why);
}
END_TEST

static Suite *cgroup_memory_suite(void)
{
    Suite *s = suite_create("cgroup_memory");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, v2_only_host);
    tcase_add_test(tc, v2_without_memory_controller);
    tcase_add_test(tc, v1_legacy_host);
    tcase_add_test(tc, hybrid_host);
    tcase_add_test(tc, hostile_contents);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(cgroup_memory_suite)
