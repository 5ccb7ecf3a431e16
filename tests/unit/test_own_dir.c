/* test_own_dir.c - memprof's own directories: made 0700 and removed whole;
 * one left by a killed memprof swept by the next; one whose memprof lives,
 * another user's mode, a link or another prefix left alone. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/base/own_dir.h"
#include "tests/unit/unit.h"

static char tmp[64];

static void tmp_setup(void)
{
    strcpy(tmp, "/tmp/test_own_dir.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmp));
    setenv("TMPDIR", tmp, 1);
}

static bool exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

static void put_file(const char *dir, const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("x", f);
    fclose(f);
}

/* A child makes a directory with a file and a run directory in it, tells
 * its path through a pipe, then waits to be killed. */
static pid_t child_with_dir(const char *prefix, char *path, size_t len)
{
    int p[2];
    ck_assert_int_eq(pipe(p), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        struct own_dir d;
        struct mp_error err;
        if (own_dir_make(&d, prefix, "a test", &err) < 0)
            _exit(1);
        put_file(d.path, "1.heap.z");
        char run[512];
        snprintf(run, sizeof run, "%s/run-1", d.path);
        mkdir(run, 0700);
        put_file(run, "raw");
        if (write(p[1], d.path, strlen(d.path) + 1) < 0)
            _exit(1);
        pause();
        _exit(0);
    }
    close(p[1]);
    ssize_t got = read(p[0], path, len);
    close(p[0]);
    ck_assert_int_gt(got, 0);
    return pid;
}

static void kill_child(pid_t pid)
{
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

START_TEST(made_private_and_removed_whole)
{
    tmp_setup();
    struct own_dir d;
    struct mp_error err;
    ck_assert_int_eq(own_dir_make(&d, "memprof-dumps", "a test", &err), 0);
    struct stat st;
    ck_assert_int_eq(stat(d.path, &st), 0);
    ck_assert_uint_eq(st.st_mode & 07777, 0700);
    ck_assert_int_eq(strncmp(d.path, tmp, strlen(tmp)), 0);
    put_file(d.path, "1.heap.z");
    char path[512];
    snprintf(path, sizeof path, "%s", d.path);
    own_dir_remove(&d);
    ck_assert(!exists(path));
    ck_assert_ptr_null(d.path);
    own_dir_remove(&d);                     /* twice: nothing */
    rmdir(tmp);
}
END_TEST

START_TEST(left_by_a_killed_memprof_swept)
{
    tmp_setup();
    char left[512], alive[512];
    pid_t killed = child_with_dir("memprof-serve", left, sizeof left);
    pid_t living = child_with_dir("memprof-serve", alive, sizeof alive);
    kill_child(killed);
    ck_assert(exists(left));
    struct own_dir d;
    struct mp_error err;
    ck_assert_int_eq(own_dir_make(&d, "memprof-serve", "a test", &err), 0);
    ck_assert_msg(!exists(left), "%s outlived its memprof", left);
    ck_assert_msg(exists(alive), "%s removed while its memprof lives", alive);
    own_dir_remove(&d);
    kill_child(living);
    ck_assert_int_eq(own_dir_make(&d, "memprof-serve", "a test", &err), 0);
    ck_assert(!exists(alive));
    own_dir_remove(&d);
    ck_assert_int_eq(rmdir(tmp), 0);        /* nothing else left */
}
END_TEST

START_TEST(others_left_alone)
{
    tmp_setup();
    char open_dir[512], other_prefix[512], link[512], target[256], file[512];
    snprintf(open_dir, sizeof open_dir, "%s/memprof-dumps.open", tmp);
    ck_assert_int_eq(mkdir(open_dir, 0755), 0);           /* not a mode memprof makes */
    snprintf(other_prefix, sizeof other_prefix, "%s/memprof-dumpsX.a", tmp);
    ck_assert_int_eq(mkdir(other_prefix, 0700), 0);
    snprintf(target, sizeof target, "%s/elsewhere", tmp);
    ck_assert_int_eq(mkdir(target, 0700), 0);
    put_file(target, "precious");
    snprintf(link, sizeof link, "%s/memprof-dumps.link", tmp);
    ck_assert_int_eq(symlink(target, link), 0);
    snprintf(file, sizeof file, "%s/memprof-dumps.file", tmp);
    put_file(tmp, "memprof-dumps.file");
    struct own_dir d;
    struct mp_error err;
    ck_assert_int_eq(own_dir_make(&d, "memprof-dumps", "a test", &err), 0);
    ck_assert(exists(open_dir));
    ck_assert(exists(other_prefix));
    ck_assert(exists(link));
    snprintf(file, sizeof file, "%s/precious", target);
    ck_assert(exists(file));
    own_dir_remove(&d);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

START_TEST(unwritable_tmpdir_said)
{
    setenv("TMPDIR", "/proc/self", 1);
    struct own_dir d;
    struct mp_error err;
    ck_assert_int_eq(own_dir_make(&d, "memprof-dumps", "the session's dumps", &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "the session's dumps"));
    ck_assert_ptr_nonnull(strstr(err.msg, "set TMPDIR"));
    ck_assert_ptr_null(d.path);
}
END_TEST

static Suite *own_dir_suite(void)
{
    Suite *s = suite_create("own_dir");
    TCase *tc = tcase_create("own_dir");
    tcase_add_test(tc, made_private_and_removed_whole);
    tcase_add_test(tc, left_by_a_killed_memprof_swept);
    tcase_add_test(tc, others_left_alone);
    tcase_add_test(tc, unwritable_tmpdir_said);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(own_dir_suite)
