/* test_unwind_tables.c - the .eh_frame_hdr header as a process maps it
 * (attach/unwind_tables.c): the layout every linker writes is taken, with
 * its table's offset and count; anything else (another version, other
 * encodings, no table, a count no object has, too few bytes) is refused,
 * and the walk then falls back to libunwind-ptrace. */
#include "tests/unit/unit.h"

#include <string.h>

#include "attach/unwind_tables.h"

/* version 1, eh_frame_ptr pcrel|sdata4, fde_count udata4, table datarel|sdata4 */
static void header(unsigned char h[12], uint32_t count)
{
    const unsigned char start[8] = {1, 0x1b, 0x03, 0x3b, 0x10, 0x20, 0x00, 0x00};
    memcpy(h, start, sizeof start);
    memcpy(h + 8, &count, sizeof count);
}

START_TEST(linkers_layout_is_taken)
{
    unsigned char h[12];
    size_t off = 0;
    uint64_t n = 0;
    header(h, 2938);
    ck_assert_int_eq(unwind_table_parse_header(h, sizeof h, &off, &n), 0);
    ck_assert_uint_eq(off, 12);
    ck_assert_uint_eq(n, 2938);
    h[1] = 0x3b;    /* a datarel eh_frame_ptr is 4 bytes too */
    ck_assert_int_eq(unwind_table_parse_header(h, sizeof h, &off, &n), 0);
}
END_TEST

START_TEST(anything_else_is_refused)
{
    unsigned char h[12];
    size_t off;
    uint64_t n;
    header(h, 10);
    ck_assert_int_eq(unwind_table_parse_header(h, 11, &off, &n), -1);
    h[0] = 2;
    ck_assert_int_eq(unwind_table_parse_header(h, sizeof h, &off, &n), -1);
    header(h, 10);
    h[1] = 0xff;    /* no eh_frame pointer */
    ck_assert_int_eq(unwind_table_parse_header(h, sizeof h, &off, &n), -1);
    header(h, 10);
    h[1] = 0x1c;    /* 8-byte pointer: another layout */
    ck_assert_int_eq(unwind_table_parse_header(h, sizeof h, &off, &n), -1);
    header(h, 10);
    h[3] = 0xff;    /* no binary-search table */
    ck_assert_int_eq(unwind_table_parse_header(h, sizeof h, &off, &n), -1);
    header(h, 10);
    h[2] = 0x0b;
    ck_assert_int_eq(unwind_table_parse_header(h, sizeof h, &off, &n), -1);
    header(h, 0);
    ck_assert_int_eq(unwind_table_parse_header(h, sizeof h, &off, &n), -1);
    header(h, 0xffffffffu);
    ck_assert_int_eq(unwind_table_parse_header(h, sizeof h, &off, &n), -1);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("unwind_tables");
    TCase *tc = tcase_create("header");
    tcase_add_test(tc, linkers_layout_is_taken);
    tcase_add_test(tc, anything_else_is_refused);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(suite)
