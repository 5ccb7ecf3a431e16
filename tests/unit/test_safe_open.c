/* test_safe_open.c - a file inside a root memprof does not own (a
 * --sysroot, a process's root) is opened inside it: an absolute symbolic
 * link there names the root's file, never memprof's own; a final link is
 * refused when asked; and only regular files are opened. */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/base/safe_open.h"
#include "tests/unit/unit.h"

static char base[64];

static void put(const char *rel, const char *text)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", base, rel);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

/* The first line of what safe_open_in_root opens at base + rel (root
 * base/root), or "" when it refuses. */
static const char *read_in_root(const char *rel, bool nofollow, char *buf, size_t len)
{
    char root[PATH_MAX], path[PATH_MAX * 2];
    snprintf(root, sizeof root, "%s/root", base);
    snprintf(path, sizeof path, "%s/%s", base, rel);
    buf[0] = 0;
    int fd = safe_open_in_root(root, path, nofollow, NULL);
    if (fd < 0)
        return buf;
    ssize_t n = read(fd, buf, len - 1);
    buf[n > 0 ? n : 0] = 0;
    close(fd);
    return buf;
}

static void setup(void)
{
    snprintf(base, sizeof base, "/tmp/safe_open_test.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(base));
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/root", base);
    ck_assert_int_eq(mkdir(p, 0755), 0);
    snprintf(p, sizeof p, "%s/root/lib", base);
    ck_assert_int_eq(mkdir(p, 0755), 0);
    put("root/lib/libx.so.1", "inside");
    put("outside", "host");
    /* Absolute links as a root file system has them. */
    char link[PATH_MAX], target[PATH_MAX];
    snprintf(link, sizeof link, "%s/root/lib/libx.so", base);
    ck_assert_int_eq(symlink("/lib/libx.so.1", link), 0);
    snprintf(link, sizeof link, "%s/root/lib/escape", base);
    snprintf(target, sizeof target, "%s/outside", base);
    ck_assert_int_eq(symlink(target, link), 0);
    snprintf(link, sizeof link, "%s/root/lib/fifo", base);
    ck_assert_int_eq(mkfifo(link, 0600), 0);
}

static void teardown(void)
{
    char cmd[PATH_MAX];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
    ck_assert_int_eq(system(cmd), 0);
}

START_TEST(absolute_links_resolve_inside_the_root)
{
    char buf[64];
    ck_assert_str_eq(read_in_root("root/lib/libx.so.1", false, buf, sizeof buf), "inside");
    ck_assert_str_eq(read_in_root("root/lib/libx.so", false, buf, sizeof buf), "inside");
    /* The host's file by its absolute name: not there inside the root. */
    ck_assert_str_eq(read_in_root("root/lib/escape", false, buf, sizeof buf), "");
    ck_assert_str_eq(read_in_root("root/lib/libx.so", true, buf, sizeof buf), "");
    ck_assert_str_eq(read_in_root("root/lib/fifo", false, buf, sizeof buf), "");
    /* A path not under the root is opened as it is. */
    ck_assert_str_eq(read_in_root("outside", false, buf, sizeof buf), "host");
}
END_TEST

static Suite *safe_open_suite(void)
{
    Suite *s = suite_create("safe_open");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, absolute_links_resolve_inside_the_root);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(safe_open_suite)
