/* test_sym_debug.c - a debug file beside an object inside a target's root
 * is a file the target's user placed: sym_debug_open finds it there, but
 * never through a symlink that leaves the root, never through a final
 * symlink, and never opens a FIFO (or device) for reading. */
#include <fcntl.h>
#include <stdbool.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/symbolize/debug_file.h"
#include "tests/unit/fixtures/fixture_out.h"
#include "tests/unit/unit.h"

struct root {
    char base[64];              /* the temporary directory holding both */
    char dir[PATH_MAX];         /* the fake target root */
    char outside[PATH_MAX];     /* a host directory outside it */
    char object[PATH_MAX + 32]; /* <dir>/bin/prog_pie, stripped, debuglink prog_pie.debug */
    struct elf_object *obj;
};

static void copy_file(const char *from, const char *to)
{
    char cmd[3 * PATH_MAX];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", from, to);
    ck_assert_int_eq(system(cmd), 0);
}

static void root_make(struct root *r)
{
    char *tmpl = r->base;
    snprintf(r->base, sizeof r->base, "/tmp/sym_debug_test.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(r->base));
    snprintf(r->outside, sizeof r->outside, "%s/outside", tmpl);
    snprintf(r->dir, sizeof r->dir, "%s/root", tmpl);
    char bin[PATH_MAX + 8], dbg[PATH_MAX + 32];
    snprintf(bin, sizeof bin, "%s/bin", r->dir);
    ck_assert_int_eq(mkdir(r->outside, 0755), 0);
    ck_assert_int_eq(mkdir(r->dir, 0755), 0);
    ck_assert_int_eq(mkdir(bin, 0755), 0);
    snprintf(r->object, sizeof r->object, "%s/prog_pie", bin);
    copy_file(fixture_path("stripped/prog_pie"), r->object);
    snprintf(dbg, sizeof dbg, "%s/prog_pie.debug", r->outside);
    copy_file(fixture_path("prog_pie.debug"), dbg);
    struct mp_error err;
    r->obj = elf_object_open(r->object, &err);
    ck_assert_ptr_nonnull(r->obj);
    ck_assert_str_eq(r->obj->debuglink, "prog_pie.debug");
}

static int root_search(struct root *r, char **path)
{
    struct sym_debug_search q = {
        .obj = r->obj, .opened_path = r->object, .path_in_root = "/bin/prog_pie",
        .root = r->dir, .debug_dir = "/nonexistent-debug-dir",
    };
    char *mismatch = NULL;
    int fd = sym_debug_open(&q, path, &mismatch);
    free(mismatch);
    return fd;
}

static void root_free(struct root *r)
{
    elf_object_free(r->obj);
    char cmd[PATH_MAX + 32];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", r->base);
    ck_assert_int_eq(system(cmd), 0);
}

/* Search, expect a hit (or none), and remove the root. */
static void expect_found(struct root *r, bool found)
{
    char *path = NULL;
    int fd = root_search(r, &path);
    if (found) {
        ck_assert_int_ge(fd, 0);
        ck_assert_ptr_nonnull(path);
        close(fd);
    } else {
        ck_assert_int_eq(fd, -1);
        ck_assert_ptr_null(path);
    }
    free(path);
    root_free(r);
}

/* <dir>/<rel>: a path inside the root (or, for "", its base). */
static const char *in(const struct root *r, const char *rel)
{
    static char paths[2][PATH_MAX + 64];
    static int next;
    char *p = paths[next++ % 2];
    snprintf(p, sizeof paths[0], "%s%s", r->dir, rel);
    return p;
}

START_TEST(found_beside_inside_the_root)
{
    struct root r;
    root_make(&r);
    copy_file(fixture_path("prog_pie.debug"), in(&r, "/bin/prog_pie.debug"));
    expect_found(&r, true);
}
END_TEST

START_TEST(relative_link_inside_the_root_followed)
{
    struct root r;
    root_make(&r);
    ck_assert_int_eq(mkdir(in(&r, "/dbg"), 0755), 0);
    copy_file(fixture_path("prog_pie.debug"), in(&r, "/dbg/prog_pie.debug"));
    ck_assert_int_eq(symlink("../dbg", in(&r, "/bin/.debug")), 0);
    expect_found(&r, true);
}
END_TEST

/* An absolute link means the root's own directory, never the host's. */
START_TEST(absolute_link_does_not_leave_the_root)
{
    struct root r;
    root_make(&r);
    ck_assert_int_eq(symlink(r.outside, in(&r, "/bin/.debug")), 0);
    expect_found(&r, false);
}
END_TEST

START_TEST(final_symlink_not_followed)
{
    struct root r;
    root_make(&r);
    char target[PATH_MAX + 32];
    snprintf(target, sizeof target, "%s/prog_pie.debug", r.outside);
    ck_assert_int_eq(symlink(target, in(&r, "/bin/prog_pie.debug")), 0);
    expect_found(&r, false);
}
END_TEST

/* A read from a FIFO nobody writes would never end. */
START_TEST(fifo_not_opened)
{
    struct root r;
    root_make(&r);
    ck_assert_int_eq(mkfifo(in(&r, "/bin/prog_pie.debug"), 0644), 0);
    expect_found(&r, false);
}
END_TEST

static Suite *sym_debug_suite(void)
{
    Suite *s = suite_create("sym_debug");
    TCase *tc = tcase_create("untrusted");
    tcase_add_test(tc, found_beside_inside_the_root);
    tcase_add_test(tc, relative_link_inside_the_root_followed);
    tcase_add_test(tc, absolute_link_does_not_leave_the_root);
    tcase_add_test(tc, final_symlink_not_followed);
    tcase_add_test(tc, fifo_not_opened);
    tcase_set_timeout(tc, 30);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(sym_debug_suite)
