/* test_text_escape.c - target strings made safe for a terminal: control
 * bytes, C1 controls and broken UTF-8 as \xNN, everything else unchanged. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/base/text_escape.h"
#include "tests/unit/unit.h"

START_TEST(safe_text_is_returned_as_is)
{
    char b[64];
    const char *ok[] = { "main", "std::vector<int>::push_back(int&&)", "caf\xc3\xa9",
                         "\xe2\x82\xac \xf0\x9f\x98\x80", "a\\x1b", "" };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        ck_assert(text_is_safe(ok[i]));
        ck_assert_ptr_eq(text_escape(ok[i], b, sizeof b), ok[i]);
    }
    ck_assert_ptr_null(text_escape(NULL, b, sizeof b));
}
END_TEST

START_TEST(controls_and_bad_utf8_escaped)
{
    char b[128];
    ck_assert_str_eq(text_escape("evil\x1b]0;pwned\x07\x1b[2J\x1b[31m", b, sizeof b),
                     "evil\\x1b]0;pwned\\x07\\x1b[2J\\x1b[31m");
    ck_assert_str_eq(text_escape("a\tb\nc\x7f", b, sizeof b), "a\\x09b\\x0ac\\x7f");
    /* C1 CSI (U+009B), a lone continuation byte, an overlong '/', a
     * surrogate, a truncated sequence at the end. */
    ck_assert_str_eq(text_escape("x\xc2\x9by", b, sizeof b), "x\\xc2\\x9by");
    ck_assert_str_eq(text_escape("\x80", b, sizeof b), "\\x80");
    ck_assert_str_eq(text_escape("\xc0\xaf", b, sizeof b), "\\xc0\\xaf");
    ck_assert_str_eq(text_escape("\xed\xa0\x80", b, sizeof b), "\\xed\\xa0\\x80");
    ck_assert_str_eq(text_escape("ok\xe2\x82", b, sizeof b), "ok\\xe2\\x82");
    ck_assert_str_eq(text_escape("\xc3\xa9\x1b", b, sizeof b), "\xc3\xa9\\x1b");
}
END_TEST

START_TEST(cut_at_a_whole_escape)
{
    char b[12];
    const char *e = text_escape("\x1b\x1b\x1b\x1b\x1b", b, sizeof b);
    ck_assert_str_eq(e, "\\x1b\\x1b...");
    ck_assert(strlen(e) < sizeof b);
}
END_TEST

START_TEST(put_writes_all)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    text_escape_put(f, "t\x07i\xc3\xa9");
    fclose(f);
    ck_assert_str_eq(text, "t\\x07i\xc3\xa9");
    free(text);
}
END_TEST

/* Markup: the five characters as entities, what a document cannot hold
 * (controls, C1, broken UTF-8) as '?', valid UTF-8 kept; cut to a count
 * of characters with "..". */
START_TEST(markup_escaped_for_xml_and_html)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    text_markup_put(f, "<b id=\"x\">'&'</b>\x1b[31m\xc2\x9b\xff\xc3\xa9", SIZE_MAX);
    putc('|', f);
    text_markup_put(f, "abcdef\xc3\xa9", 5);
    putc('|', f);
    text_markup_put(f, "abc\xc3\xa9", 4);
    fclose(f);
    ck_assert_str_eq(text, "&lt;b id=&quot;x&quot;&gt;&apos;&amp;&apos;&lt;/b&gt;?[31m???\xc3\xa9"
                           "|abc..|abc\xc3\xa9");
    free(text);
    ck_assert_uint_eq(text_markup_chars("a\xc3\xa9\xff"), 3);
}
END_TEST

static Suite *text_escape_suite(void)
{
    Suite *s = suite_create("text_escape");
    TCase *tc = tcase_create("escape");
    tcase_add_test(tc, safe_text_is_returned_as_is);
    tcase_add_test(tc, controls_and_bad_utf8_escaped);
    tcase_add_test(tc, cut_at_a_whole_escape);
    tcase_add_test(tc, put_writes_all);
    tcase_add_test(tc, markup_escaped_for_xml_and_html);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(text_escape_suite)
