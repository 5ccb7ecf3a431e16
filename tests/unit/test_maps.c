/* test_maps.c - the /proc/PID/maps parser (lib/proc/maps.c): lines as the kernel
 * prints them, every rejection, sorting, lookup and reading a live process. */
#include "tests/unit/unit.h"

#include <string.h>
#include <unistd.h>

#include "lib/proc/maps.h"

static struct mp_error err;

START_TEST(kernel_lines)
{
    struct map_entry e;
    const char *l = "55cd86893000-55cd86894000 r-xp 00001000 fe:00 10952930"
                    "                   /tmp/mp/dumper";
    ck_assert_int_eq(maps_parse_line(l, strlen(l), &e, &err), 0);
    ck_assert_uint_eq(e.start, 0x55cd86893000);
    ck_assert_uint_eq(e.end, 0x55cd86894000);
    ck_assert_uint_eq(e.offset, 0x1000);
    ck_assert_uint_eq(e.dev_major, 0xfe);
    ck_assert_uint_eq(e.dev_minor, 0);
    ck_assert_uint_eq(e.inode, 10952930);
    ck_assert(e.r && !e.w && e.x && !e.shared && !e.deleted);
    ck_assert_str_eq(e.path, "/tmp/mp/dumper");
    ck_assert(map_entry_is_file(&e));
    free(e.path);

    l = "7fed1f400000-7fed1f800000 rw-s 00000000 00:00 0 ";
    ck_assert_int_eq(maps_parse_line(l, strlen(l), &e, &err), 0);
    ck_assert(e.r && e.w && !e.x && e.shared);
    ck_assert_str_eq(e.path, "");
    ck_assert(!map_entry_is_file(&e));
    free(e.path);

    l = "7ffdf0c68000-7ffdf0c89000 rw-p 00000000 00:00 0                          [stack]";
    ck_assert_int_eq(maps_parse_line(l, strlen(l), &e, &err), 0);
    ck_assert_str_eq(e.path, "[stack]");
    ck_assert(!map_entry_is_file(&e));
    free(e.path);

    l = "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]";
    ck_assert_int_eq(maps_parse_line(l, strlen(l), &e, &err), 0);
    ck_assert_uint_eq(e.end, 0xffffffffff601000);
    ck_assert(!e.r && !e.w && e.x);
    free(e.path);
}
END_TEST

START_TEST(paths_with_spaces_and_deleted)
{
    struct map_entry e;
    const char *l = "1000-2000 r--p 00000000 08:01 42 /opt/my app/lib x.so (deleted)";
    ck_assert_int_eq(maps_parse_line(l, strlen(l), &e, &err), 0);
    ck_assert(e.deleted);
    ck_assert_str_eq(e.path, "/opt/my app/lib x.so");
    free(e.path);
}
END_TEST

START_TEST(big_inode)
{
    /* Inodes are 64-bit: 20 digits is a valid inode, 2^64 is not. */
    struct map_entry e;
    const char *l = "1000-2000 r--p 00000000 08:01 18446744073709551615 /x";
    ck_assert_int_eq(maps_parse_line(l, strlen(l), &e, &err), 0);
    ck_assert_uint_eq(e.inode, UINT64_MAX);
    free(e.path);
    l = "1000-2000 r--p 00000000 08:01 18446744073709551616 /x";
    ck_assert_int_eq(maps_parse_line(l, strlen(l), &e, &err), -1);
    ck_assert_str_eq(err.msg, "inode number out of range");
}
END_TEST

static void line_fails(const char *line, const char *want)
{
    struct map_entry e;
    ck_assert_msg(maps_parse_line(line, strlen(line), &e, &err) == -1, "parsed: %s", line);
    ck_assert_str_eq(err.msg, want);
    ck_assert_ptr_null(e.path);
}

START_TEST(rejections)
{
    line_fails("", "expected 'start-end' addresses");
    line_fails("1000 r--p 0 0:0 0", "expected 'start-end' addresses");
    line_fails("1000-zz r--p 0 0:0 0", "expected 'start-end' addresses");
    line_fails("00000000000000001-2 r--p 0 0:0 0", "expected 'start-end' addresses");
    line_fails("1000-2000r--p 0 0:0 0", "expected 'start-end' addresses");
    line_fails("2000-1000 r--p 0 0:0 0", "mapping ends before it starts");
    line_fails("1000-2000 r-", "expected permissions such as 'r-xp'");
    line_fails("1000-2000 rwxq 0 0:0 0", "expected permissions such as 'r-xp'");
    line_fails("1000-2000 r-xpx 0 0:0 0", "expected permissions such as 'r-xp'");
    line_fails("1000-2000 r-xp g 0:0 0", "expected a hexadecimal file offset");
    line_fails("1000-2000 r-xp 0 08-01 0", "expected a device 'major:minor'");
    line_fails("1000-2000 r-xp 0 08:01", "expected a device 'major:minor'");
    line_fails("1000-2000 r-xp 0 100000000:01 0", "device number out of range");
    line_fails("1000-2000 r-xp 0 08:01 x", "expected a decimal inode number");
    line_fails("1000-2000 r-xp 0 08:01 12ab /x", "expected a decimal inode number");
}
END_TEST

static const char text[] =
    "3000-4000 r-xp 00000000 08:01 7 /b\n"
    "this is not a maps line\n"
    "\n"
    "1000-2000 r--p 00000000 08:01 7 /a\r\n"
    "5000-6000 rw-p 00000000 00:00 0";    /* no final newline */

START_TEST(whole_text_lenient_sorts)
{
    struct map_list m;
    ck_assert_int_eq(maps_parse(text, strlen(text), false, &m, &err), 0);
    ck_assert_uint_eq(m.n, 3);
    ck_assert_uint_eq(m.v[0].start, 0x1000);
    ck_assert_str_eq(m.v[0].path, "/a");      /* \r dropped */
    ck_assert_uint_eq(m.v[1].start, 0x3000);
    ck_assert_uint_eq(m.v[2].start, 0x5000);
    ck_assert_str_eq(m.v[2].path, "");
    maps_free(&m);
    ck_assert_uint_eq(m.n, 0);
    ck_assert_ptr_null(m.v);
}
END_TEST

START_TEST(whole_text_strict_names_the_line)
{
    struct map_list m;
    ck_assert_int_eq(maps_parse(text, strlen(text), true, &m, &err), -1);
    ck_assert_str_eq(err.msg, "line 2: expected 'start-end' addresses");
    ck_assert_uint_eq(m.n, 0);
    ck_assert_int_eq(maps_parse("", 0, true, &m, &err), 0);
    ck_assert_uint_eq(m.n, 0);
}
END_TEST

START_TEST(find)
{
    struct map_list m;
    ck_assert_int_eq(maps_parse(text, strlen(text), false, &m, &err), 0);
    ck_assert_ptr_null(maps_find(&m, 0xfff));
    ck_assert_str_eq(maps_find(&m, 0x1000)->path, "/a");
    ck_assert_str_eq(maps_find(&m, 0x1fff)->path, "/a");
    ck_assert_ptr_null(maps_find(&m, 0x2000));      /* end is exclusive */
    ck_assert_str_eq(maps_find(&m, 0x3abc)->path, "/b");
    ck_assert_uint_eq(maps_find(&m, 0x5fff)->start, 0x5000);
    ck_assert_ptr_null(maps_find(&m, 0x6000));
    maps_free(&m);
    struct map_list none = {0};
    ck_assert_ptr_null(maps_find(&none, 0x1000));
}
END_TEST

/* Found by fuzz_maps: a hostile dump can hold overlapping mappings.  The
 * list still sorts; lookups may miss but never return a wrong entry. */
START_TEST(overlapping_entries)
{
    static const char o[] =
        "20-3001 r--s 00000000 fe:01 5 /x\n"
        "2000-3000 r--s 00000000 fe:01 5 /a b c\n"
        "2000-2000 ---p 00000000 00:00 0\n";
    struct map_list m;
    ck_assert_int_eq(maps_parse(o, sizeof o - 1, true, &m, &err), 0);
    ck_assert_uint_eq(m.n, 3);
    ck_assert_uint_eq(m.v[0].start, 0x20);
    ck_assert_uint_eq(m.v[1].start, 0x2000);
    ck_assert_uint_eq(m.v[2].start, 0x2000);
    for (uint64_t a = 0; a < 0x3100; a += 0x10) {
        const struct map_entry *e = maps_find(&m, a);
        ck_assert(e == NULL || (e->start <= a && a < e->end));
    }
    maps_free(&m);
}
END_TEST

START_TEST(read_own_process)
{
    struct map_list m;
    ck_assert_msg(maps_read_pid(getpid(), &m, &err) == 0, "%s", err.msg);
    const struct map_entry *e = maps_find(&m, (uint64_t)(uintptr_t)&maps_find);
    ck_assert_ptr_nonnull(e);
    ck_assert(e->x && map_entry_is_file(e));
    int on_stack;
    e = maps_find(&m, (uint64_t)(uintptr_t)&on_stack);
    ck_assert_ptr_nonnull(e);
    ck_assert(e->w);
    maps_free(&m);
    ck_assert_int_eq(maps_read_pid(-5, &m, &err), -1);
    ck_assert_str_eq(err.msg, "cannot read /proc/-5/maps: No such file or directory");
}
END_TEST

START_TEST(program_or_not)
{
    /* An address space just switched to by an exec: only its stack. */
    static const char bare[] = "7ffc0000-7ffc2000 rw-p 00000000 00:00 0 [stack]\n";
    static const char lib_data[] = "7ffc0000-7ffc2000 rw-p 00000000 00:00 0 [stack]\n"
        "1000-2000 r--p 00000000 fe:01 7 /usr/lib/libc.so.6\n"
        "3000-4000 r-xp 00000000 00:00 0 [vdso]\n"
        "5000-6000 rwxp 00000000 00:00 0\n";
    static const char prog[] = "1000-2000 r--p 00000000 fe:01 7 /usr/bin/x\n"
        "2000-3000 r-xp 00001000 fe:01 7 /usr/bin/x\n";
    struct map_list m;
    ck_assert_int_eq(maps_parse(bare, sizeof bare - 1, true, &m, &err), 0);
    ck_assert(!maps_have_program(&m));
    maps_free(&m);
    ck_assert_int_eq(maps_parse(lib_data, sizeof lib_data - 1, true, &m, &err), 0);
    ck_assert(!maps_have_program(&m));
    maps_free(&m);
    ck_assert_int_eq(maps_parse(prog, sizeof prog - 1, true, &m, &err), 0);
    ck_assert(maps_have_program(&m));
    maps_free(&m);
    ck_assert_int_eq(maps_read_pid(getpid(), &m, &err), 0);
    ck_assert(maps_have_program(&m));
    maps_free(&m);
}
END_TEST

static Suite *maps_suite(void)
{
    Suite *s = suite_create("maps");
    TCase *tc = tcase_create("lines");
    tcase_add_test(tc, kernel_lines);
    tcase_add_test(tc, paths_with_spaces_and_deleted);
    tcase_add_test(tc, big_inode);
    tcase_add_test(tc, rejections);
    suite_add_tcase(s, tc);
    tc = tcase_create("lists");
    tcase_add_test(tc, whole_text_lenient_sorts);
    tcase_add_test(tc, whole_text_strict_names_the_line);
    tcase_add_test(tc, find);
    tcase_add_test(tc, overlapping_entries);
    tcase_add_test(tc, read_own_process);
    tcase_add_test(tc, program_or_not);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(maps_suite)
