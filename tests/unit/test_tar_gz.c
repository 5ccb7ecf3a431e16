/* test_tar_gz.c - a directory tree as a gzip'd tar (lib/base/tar_gz.c),
 * read back by GNU tar: files with their bytes, directories, a path past
 * tar's 100 bytes (split into prefix and name), links, a FIFO and a
 * socket left out, the depth bound; a file name too long for ustar and the size bound
 * refused. */
#include "tests/unit/unit.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "lib/base/own_dir.h"
#include "lib/base/tar_gz.h"

static char base[64];

static void put(const char *rel, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", base, rel);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static void dir(const char *rel)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", base, rel);
    ck_assert_int_eq(mkdir(path, 0700), 0);
}

/* Make base/top with a tree in it; the archive goes to base/out.tgz. */
static int archive(uint64_t max, struct mp_error *err)
{
    int dfd = open(base, O_RDONLY | O_DIRECTORY);
    char path[128];
    snprintf(path, sizeof path, "%s/out.tgz", base);
    int out = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ck_assert(dfd >= 0 && out >= 0);
    int rc = tar_gz_dir(dfd, "top", out, max, err);
    close(out);
    close(dfd);
    return rc;
}

/* GNU tar's listing of the archive (or a file's bytes with -O FILE). */
static char *tar_says(const char *args)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "tar -xzf %s/out.tgz -O %s 2>&1 || echo TAR-FAILED", base, args);
    if (!strcmp(args, "--list"))
        snprintf(cmd, sizeof cmd, "tar -tzf %s/out.tgz 2>&1 || echo TAR-FAILED", base);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    static char buf[8192];
    size_t n = fread(buf, 1, sizeof buf - 1, p);
    buf[n] = 0;
    pclose(p);
    return buf;
}

START_TEST(a_tree)
{
    snprintf(base, sizeof base, "/tmp/memprof-tar-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(base));
    dir("top");
    dir("top/.build-id");
    dir("top/.build-id/ab");
    put("top/manifest.json", "{\"kind\": \"memprof run\"}\n");
    put("top/.build-id/ab/cdef0123456789abcdef0123456789abcdef01", "ELF?");
    /* a path of 127 bytes: split into a prefix and a name */
    char longname[160];
    memset(longname, 'n', 90);
    longname[90] = 0;
    char rel[300];
    snprintf(rel, sizeof rel, "top/%s", longname);
    dir(rel);
    snprintf(rel, sizeof rel, "top/%s/%s", longname, "mmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmm");
    put(rel, "long\n");
    ck_assert_int_eq(symlink("/etc/passwd", strcat(strcpy(rel, base), "/top/link")), 0);
    snprintf(rel, sizeof rel, "%s/top/fifo", base);
    ck_assert_int_eq(mkfifo(rel, 0600), 0);
    struct sockaddr_un sun = {.sun_family = AF_UNIX};     /* open() says ENXIO */
    snprintf(sun.sun_path, sizeof sun.sun_path, "%s/top/sock", base);
    int sock = socket(AF_UNIX, SOCK_STREAM, 0);
    ck_assert_int_eq(bind(sock, (struct sockaddr *)&sun, sizeof sun), 0);
    dir("top/.build-id/ab/deeper");                 /* past TAR_GZ_DEPTH */
    put("top/.build-id/ab/deeper/x", "too deep");
    struct mp_error err;
    ck_assert_msg(archive(1 << 20, &err) == 0, "%s", err.msg);
    const char *list = tar_says("--list");
    ck_assert_msg(!strstr(list, "TAR-FAILED"), "%s", list);
    ck_assert_msg(strstr(list, "top/\n") && strstr(list, "top/manifest.json\n") &&
                  strstr(list, "top/.build-id/ab/cdef0123456789abcdef0123456789abcdef01\n"),
                  "%s", list);
    snprintf(rel, sizeof rel, "top/%s/%s\n", longname, "mmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmm");
    ck_assert_msg(strstr(list, rel), "the long name: %s", list);
    ck_assert_msg(!strstr(list, "link") && !strstr(list, "fifo") && !strstr(list, "sock") &&
                  !strstr(list, "deeper/x"), "%s", list);
    ck_assert_str_eq(tar_says("top/manifest.json"), "{\"kind\": \"memprof run\"}\n");
    /* a file name of 100 bytes or more fits no ustar header: refused */
    memset(longname, 'x', 120);
    longname[120] = 0;
    snprintf(rel, sizeof rel, "top/%s", longname);
    put(rel, "x");
    ck_assert_int_eq(archive(1 << 20, &err), -1);
    ck_assert_msg(strstr(err.msg, "its name is too long for tar"), "%s", err.msg);
    snprintf(rel, sizeof rel, "%s/top/%s", base, longname);
    unlink(rel);
    /* more bytes than allowed: refused, saying so */
    ck_assert_int_eq(archive(10, &err), -1);
    ck_assert_msg(strstr(err.msg, "larger than the archive may be"), "%s", err.msg);
    close(sock);
    own_dir_remove_tree(AT_FDCWD, base, 4);
    ck_assert_int_ne(access(base, F_OK), 0);
}
END_TEST

static Suite *tar_suite(void)
{
    Suite *s = suite_create("tar_gz");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, a_tree);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(tar_suite)
