/* test_cgroup_memory_dir.c - finding a process's cgroup memory directory
 * (lib/proc/cgroup_memory_dir.c): the hierarchies of a mountinfo (v2,
 * hybrid, legacy, bind mounts, escaped names, cut lines), the choice of
 * v1's memory hierarchy over v2, the paths refused (outside memprof's
 * cgroup namespace, ".."), and opening beneath a cgroup mount only. */
#include "tests/unit/unit.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lib/proc/cgroup_memory.h"
#include "lib/proc/cgroup_memory_dir.h"

static const char hybrid[] =
    "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime shared:5 - cgroup cgroup rw,cpu\n"
    "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime shared:8 master:2 - cgroup cgroup rw,memory\n"
    "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";

static const char pure_v2[] =
    "26 23 0:23 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 "
    "rw,nsdelegate,memory_recursiveprot\n";

static struct cgroup_mounts mounts(const char *text)
{
    struct cgroup_mounts m;
    cgroup_mounts_parse(text, strlen(text), &m);
    return m;
}

START_TEST(mountinfo)
{
    struct cgroup_mounts m = mounts(hybrid);
    ck_assert(m.v1_memory.found && m.v2.found);
    ck_assert_str_eq(m.v1_memory.dir, "/sys/fs/cgroup/memory");
    ck_assert_str_eq(m.v2.dir, "/sys/fs/cgroup/unified");
    m = mounts(pure_v2);
    ck_assert(!m.v1_memory.found && m.v2.found);
    ck_assert_str_eq(m.v2.dir, "/sys/fs/cgroup");
    /* a bind mount of a part first, the whole later: the whole is kept */
    m = mounts("1 0 0:5 /kubepods /a rw - cgroup2 cgroup2 rw\n"
               "2 0 0:5 / /b\\040c rw - cgroup2 cgroup2 rw\n");
    ck_assert_str_eq(m.v2.dir, "/b c");
    ck_assert_str_eq(m.v2.root, "/");
    /* a memory controller named among others; "memory_recursiveprot" is not it */
    m = mounts("1 0 0:5 / /m rw - cgroup cgroup rw,cpu,memory\n");
    ck_assert(m.v1_memory.found);
    m = mounts("1 0 0:5 / /m rw - cgroup cgroup rw,memory_recursiveprot\n");
    ck_assert(!m.v1_memory.found);
    /* cut or odd lines give nothing */
    m = mounts("1 0 0:5 / /m rw - cgroup2");
    ck_assert(!m.v2.found);
    m = mounts("1 0 0:5 / relative rw - cgroup2 cgroup2 rw\n");
    ck_assert(!m.v2.found);
    m = mounts("1 0 0:5 / /m rw shared:1 shared:2 shared:3\n");
    ck_assert(!m.v2.found);
    m = mounts("1 0 0:5 / /nul\\000 rw - cgroup2 cgroup2 rw\n");
    ck_assert(!m.v2.found);
}
END_TEST

static bool locate(const char *mi, const char *cg, struct cgroup_memory_where *w, char *why)
{
    struct cgroup_mounts m = mounts(mi);
    return cgroup_memory_locate(cg, strlen(cg), &m, w, why, 512);
}

START_TEST(where)
{
    struct cgroup_memory_where w;
    char why[512];
    /* hybrid: memory from v1, pressure from v2 */
    ck_assert(locate(hybrid, "4:memory:/process_api/ab\n0::/x.slice\n", &w, why));
    ck_assert_int_eq(w.memory.version, CGROUP_V1);
    ck_assert_str_eq(w.memory.mount, "/sys/fs/cgroup/memory");
    ck_assert_str_eq(w.memory.rel, "process_api/ab");
    ck_assert_str_eq(w.memory.path, "/process_api/ab");
    ck_assert(w.has_pressure);
    ck_assert_str_eq(w.pressure.mount, "/sys/fs/cgroup/unified");
    ck_assert_str_eq(w.pressure.rel, "x.slice");
    /* the root cgroup: the mount's top */
    ck_assert(locate(hybrid, "4:memory:/\n0::/\n", &w, why));
    ck_assert_str_eq(w.memory.rel, "");
    /* v2 only */
    ck_assert(locate(pure_v2, "0::/system.slice/redis.service\n", &w, why));
    ck_assert_int_eq(w.memory.version, CGROUP_V2);
    ck_assert_str_eq(w.memory.rel, "system.slice/redis.service");
    ck_assert(w.has_pressure);
    /* outside memprof's cgroup namespace, or a path that climbs: refused */
    ck_assert(!locate(pure_v2, "0::/../../kubepods/x\n", &w, why));
    ck_assert(strstr(why, "outside memprof's own cgroup namespace"));
    ck_assert(!locate(hybrid, "4:memory:/a/../../etc\n0::/\n", &w, why));
    ck_assert(!locate(hybrid, "4:memory:/a//b\n0::/\n", &w, why));
    ck_assert(!locate(hybrid, "4:memory:/a/./b\n0::/\n", &w, why));
    ck_assert(!locate(hybrid, "4:memory:relative\n0::/\n", &w, why));
    /* v1 memory mounted but no memory line */
    ck_assert(!locate(hybrid, "0::/\n", &w, why));
    ck_assert(strstr(why, "no memory line"));
    /* nothing mounted */
    ck_assert(!locate("", "0::/\n", &w, why));
    ck_assert(strstr(why, "no cgroup file system"));
    /* a bind mount of a part: the path must be under it */
    const char *part = "1 0 0:5 /kubepods /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n";
    ck_assert(locate(part, "0::/kubepods/pod1/c\n", &w, why));
    ck_assert_str_eq(w.memory.rel, "pod1/c");
    ck_assert(!locate(part, "0::/kubepodsX/c\n", &w, why));
    ck_assert(strstr(why, "not under /kubepods"));
}
END_TEST

START_TEST(open_beneath)
{
    char why[512];
    /* /tmp is no cgroup file system: refused before any path is tried */
    struct cgroup_dir d = {.version = CGROUP_V2, .mount = "/tmp", .rel = ""};
    ck_assert_int_lt(cgroup_dir_open(&d, why, sizeof why), 0);
    ck_assert(strstr(why, "is not a cgroup file system"));
    /* a cgroup directory that does not exist says so */
    struct cgroup_mounts m;
    FILE *f = fopen("/proc/self/mountinfo", "r");
    ck_assert_ptr_nonnull(f);
    static char text[1 << 16];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    cgroup_mounts_parse(text, n, &m);
    const struct cgroup_mount *cm = m.v1_memory.found ? &m.v1_memory : &m.v2;
    ck_assert(cm->found);
    struct cgroup_dir e = {.version = CGROUP_V2};
    snprintf(e.mount, sizeof e.mount, "%s", cm->dir);
    snprintf(e.rel, sizeof e.rel, "no-such-cgroup-%d", (int)getpid());
    ck_assert_int_lt(cgroup_dir_open(&e, why, sizeof why), 0);
    ck_assert(strstr(why, "No such file"));
    /* its top opens */
    e.rel[0] = 0;
    int fd = cgroup_dir_open(&e, why, sizeof why);
    ck_assert_int_ge(fd, 0);
    close(fd);
}
END_TEST

START_TEST(headroom)
{
    struct cgroup_memory c = {.current = 100, .max = 128};
    ck_assert_uint_eq(cgroup_memory_headroom(&c), 28);
    c.current = 200;
    ck_assert_uint_eq(cgroup_memory_headroom(&c), 0);
    c.max_unlimited = true;
    ck_assert_uint_eq(cgroup_memory_headroom(&c), CGROUP_ABSENT);
    c.max_unlimited = false;
    c.current = CGROUP_ABSENT;
    ck_assert_uint_eq(cgroup_memory_headroom(&c), CGROUP_ABSENT);
}
END_TEST

static Suite *cgroup_suite(void)
{
    Suite *s = suite_create("cgroup_memory_dir");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, mountinfo);
    tcase_add_test(tc, where);
    tcase_add_test(tc, open_beneath);
    tcase_add_test(tc, headroom);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(cgroup_suite)
