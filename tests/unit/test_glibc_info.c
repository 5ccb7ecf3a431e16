/* test_glibc_info.c - the parser of glibc's malloc_info XML
 * (lib/mallinfo/glibc_info.c): a real output of this machine's glibc, every
 * rejection, what is skipped, and its limits.  Every text is parsed from a
 * buffer of exactly its length, with no NUL after it, so that ASan sees any
 * read past the end. */
#include "tests/unit/unit.h"

#include <stdio.h>
#include <string.h>

#include "lib/mallinfo/glibc_info.h"

static struct mp_error err;
static struct glibc_malloc_info mi;

static int parse_n(const char *text, size_t len)
{
    char *copy = malloc(len ? len : 1);
    ck_assert_ptr_nonnull(copy);
    memcpy(copy, text, len);
    int rc = glibc_malloc_info_parse(copy, len, &mi, &err);
    free(copy);
    return rc;
}

static void parses(const char *text)
{
    ck_assert_msg(parse_n(text, strlen(text)) == 0, "%s\nin: %s", err.msg, text);
}

/* The text must not parse, and the message must hold want. */
static void fails(const char *text, const char *want)
{
    ck_assert_msg(parse_n(text, strlen(text)) == -1, "parsed, expected \"%s\": %s", want, text);
    ck_assert_msg(strstr(err.msg, want) != NULL, "message \"%s\" lacks \"%s\"", err.msg, want);
    ck_assert_ptr_null(mi.arenas);
    ck_assert_uint_eq(mi.narenas, 0);
}

/* A small valid output, as glibc lays it out, with its pieces apart. */
#define HEAD "<malloc version=\"1\">\n"
#define HEAP(nr)                                                    \
    "<heap nr=\"" nr "\">\n<sizes>\n"                                \
    "  <size from=\"33\" to=\"48\" total=\"48\" count=\"1\"/>\n"     \
    "</sizes>\n"                                                    \
    "<total type=\"fast\" count=\"1\" size=\"48\"/>\n"               \
    "<total type=\"rest\" count=\"2\" size=\"1000\"/>\n"             \
    "<system type=\"current\" size=\"4096\"/>\n"                     \
    "<system type=\"max\" size=\"8192\"/>\n"                         \
    "<aspace type=\"total\" size=\"4096\"/>\n"                       \
    "<aspace type=\"mprotect\" size=\"4096\"/>\n"                    \
    "</heap>\n"

static const char *const totals[] = {
    "<total type=\"fast\" count=\"2\" size=\"96\"/>\n",
    "<total type=\"rest\" count=\"4\" size=\"2000\"/>\n",
    "<total type=\"mmap\" count=\"3\" size=\"409600\"/>\n",
    "<system type=\"current\" size=\"8192\"/>\n",
    "<system type=\"max\" size=\"16384\"/>\n",
    "<aspace type=\"total\" size=\"8192\"/>\n",
    "<aspace type=\"mprotect\" size=\"8192\"/>\n",
};
#define NTOTALS (sizeof totals / sizeof totals[0])

/* HEAD, two heaps, the totals but the one at skip (-1: none), </malloc>. */
static const char *small_doc(int skip)
{
    static char buf[4096];
    snprintf(buf, sizeof buf, "%s%s%s", HEAD, HEAP("0"), HEAP("1"));
    for (int i = 0; i < (int)NTOTALS; i++)
        if (i != skip)
            strcat(buf, totals[i]);
    strcat(buf, "</malloc>\n");
    return buf;
}

static char *read_data(const char *name, size_t *len)
{
    char path[512];
    const char *src = getenv("SRCDIR") ? getenv("SRCDIR") : ".";
    snprintf(path, sizeof path, "%s/tests/unit/data/%s", src, name);
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    static char buf[1 << 16];
    *len = fread(buf, 1, sizeof buf, f);
    ck_assert(feof(f));
    fclose(f);
    return buf;
}

/* ---- real output ---- */

/* tests/unit/data/glibc_malloc_info.xml: gen_malloc_info.c on Debian 12
 * (glibc 2.36): the main arena and 4 threads' arenas, 5 mmapped blocks. */
START_TEST(real_output)
{
    size_t len;
    const char *text = read_data("glibc_malloc_info.xml", &len);
    ck_assert_int_eq(parse_n(text, len), 0);
    ck_assert_uint_eq(mi.narenas, 5);
    uint64_t fc = 0, fb = 0, rc = 0, rb = 0, sys = 0, max = 0, as = 0, asp = 0;
    for (size_t i = 0; i < mi.narenas; i++) {
        const struct glibc_arena_info *a = &mi.arenas[i];
        ck_assert_uint_eq(a->nr, i);
        ck_assert_uint_gt(a->fast_count, 0);
        ck_assert_uint_gt(a->rest_bytes, 0);
        ck_assert_uint_eq(glibc_arena_free_bytes(a), a->fast_bytes + a->rest_bytes);
        ck_assert_uint_le(glibc_arena_free_bytes(a), a->system_current);
        fc += a->fast_count, fb += a->fast_bytes, rc += a->rest_count, rb += a->rest_bytes;
        sys += a->system_current, max += a->system_max;
        as += a->aspace_total, asp += a->aspace_mprotect;
    }
    ck_assert_uint_eq(mi.fast_count, fc);
    ck_assert_uint_eq(mi.fast_bytes, fb);
    ck_assert_uint_eq(mi.rest_count, rc);
    ck_assert_uint_eq(mi.rest_bytes, rb);
    ck_assert_uint_eq(mi.system_current, sys);
    ck_assert_uint_eq(mi.system_max, max);
    ck_assert_uint_eq(mi.aspace_total, as);
    ck_assert_uint_eq(mi.aspace_mprotect, asp);
    /* As printed: the main arena, then the totals. */
    ck_assert_uint_eq(mi.arenas[0].fast_count, 42);
    ck_assert_uint_eq(mi.arenas[0].fast_bytes, 2016);
    ck_assert_uint_eq(mi.arenas[0].rest_count, 111);
    ck_assert_uint_eq(mi.arenas[0].rest_bytes, 219918);
    ck_assert_uint_eq(mi.arenas[0].system_current, 540672);
    ck_assert_uint_eq(mi.fast_count, 375);
    ck_assert_uint_eq(mi.fast_bytes, 17952);
    ck_assert_uint_eq(mi.rest_bytes, 3419685);
    ck_assert_uint_eq(mi.mmap_count, 5);
    ck_assert_uint_eq(mi.mmap_bytes, 2265088);
    ck_assert_uint_eq(mi.system_current, 8941568);
    glibc_malloc_info_free(&mi);
    ck_assert_ptr_null(mi.arenas);
}
END_TEST

/* Every prefix that stops before "</malloc>" is whole is refused. */
START_TEST(truncated)
{
    size_t len;
    const char *text = read_data("glibc_malloc_info.xml", &len);
    const char *end = "</malloc>";
    const char *at = memmem(text, len, end, strlen(end));
    ck_assert_ptr_nonnull(at);
    size_t whole = (size_t)(at - text) + strlen(end);
    for (size_t n = 0; n < whole; n++) {
        ck_assert_msg(parse_n(text, n) == -1, "a prefix of %zu bytes parsed", n);
        ck_assert_ptr_null(mi.arenas);
    }
    ck_assert_int_eq(parse_n(text, whole), 0);
    glibc_malloc_info_free(&mi);
    fails("", "no <malloc> element");
    fails(HEAD HEAP("0"), "ends before </malloc> (truncated?)");
    fails(HEAD "<heap nr=\"0\"><total type=\"fast\" count=\"1", "not closed (truncated?)");
    fails(HEAD "<heap nr=\"0\"><total type=\"fast\" count=\"1\"", "ends inside a tag");
    fails(HEAD "<heap nr=\"0\"><total type=\"fast\" count=\"1\"/", "ends inside a tag");
}
END_TEST

/* A text that is whole within len, followed by bytes that would spoil it
 * were they read: the parser stops at len. */
START_TEST(not_terminated)
{
    const char *doc = small_doc(-1);
    size_t n = strlen(doc);
    char *buf = malloc(n + 8);
    memcpy(buf, doc, n);
    memcpy(buf + n, "<junk>!!", 8);
    ck_assert_int_eq(glibc_malloc_info_parse(buf, n, &mi, &err), 0);
    ck_assert_uint_eq(mi.narenas, 2);
    glibc_malloc_info_free(&mi);
    /* And a number cut by len is not completed by what lies past it. */
    const char *cut = HEAD "<heap nr=\"12";
    memcpy(buf, cut, strlen(cut));
    memcpy(buf + strlen(cut), "\">", 2);
    ck_assert_int_eq(glibc_malloc_info_parse(buf, strlen(cut), &mi, &err), -1);
    free(buf);
    ck_assert_int_eq(glibc_malloc_info_parse(NULL, 0, &mi, &err), -1);
}
END_TEST

/* ---- numbers ---- */

static const char *with_fast_count(const char *count)
{
    static char buf[4096];
    snprintf(buf, sizeof buf, "%s<heap nr=\"0\"><total type=\"fast\" count=\"%s\" size=\"1\"/>",
             HEAD, count);
    const char *rest = strstr(HEAP("0"), "<total type=\"rest\"");
    strcat(buf, rest);
    for (size_t i = 0; i < NTOTALS; i++)
        strcat(buf, totals[i]);
    strcat(buf, "</malloc>");
    return buf;
}

START_TEST(numbers)
{
    parses(with_fast_count("18446744073709551615"));
    ck_assert_uint_eq(mi.arenas[0].fast_count, UINT64_MAX);
    glibc_malloc_info_free(&mi);
    parses(with_fast_count("000000000000000000000000042"));
    ck_assert_uint_eq(mi.arenas[0].fast_count, 42);
    glibc_malloc_info_free(&mi);
    const char *bad[] = { "18446744073709551616", "99999999999999999999999", "-1", "",
                          " 1", "1 ", "0x10", "1e3", "+5", "4.0" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        fails(with_fast_count(bad[i]), "count is not a decimal number below 2^64");
    fails(HEAD "<heap nr=\"4294967296\">", "heap number 4294967296 out of range");
    fails(HEAD "<heap>", "<heap> has no nr attribute");
    fails(HEAD "<heap nr=\"0\"><system type=\"max\"/>", "<system> has no size attribute");
    fails(HEAD "<heap nr=\"0\"><total type=\"fast\" size=\"1\"/>", "<total> has no count");
}
END_TEST

/* ---- what is refused ---- */

START_TEST(garbage)
{
    fails("hello", "byte 0: text outside a tag");
    fails("\n\n<<<>>>", "byte 2: expected an element name");
    fails("<?xml version=\"1.0\"?>" HEAD, "expected an element name");
    fails("<html><body/></html>", "expected <malloc>: not malloc_info output");
    fails(HEAD "free bytes: 12", "text outside a tag");
    fails(HEAD "<heap nr=\"0\"></sizes>", "a closing tag that matches no open element");
    fails(HEAD "<heap nr=\"0\" nr=\"1\">", "attribute nr given twice");
    fails(HEAD "<heap nr=\"0\"nr=\"1\">", "unexpected character in a tag");
    fails(HEAD "<heap nr=0>", "expected a quoted attribute value");
    fails(HEAD "<heap nr>", "expected '='");
    fails(HEAD "<heap =\"1\">", "expected an attribute name");
    fails(HEAD "<heap nr=\"<0\">", "'<' inside an attribute value");
    fails(HEAD "<heap nr=\"0\"/ >", "expected '>' after '/'");
    fails(HEAD "</malloc x=\"1\">", "unexpected character in a tag");
    fails("<malloc>", "<malloc> has no version attribute");
    fails("<malloc version=\"2\">", "unknown malloc_info version");
    /* Binary: NULs and high bytes. */
    static const char bin[] = { '<', 'm', 0, (char)0xff, '>', 0, 0 };
    ck_assert_int_eq(parse_n(bin, sizeof bin), -1);
    ck_assert_int_eq(parse_n(HEAD "\0", sizeof HEAD), -1);
    /* After the end: whitespace only. */
    char buf[4096];
    snprintf(buf, sizeof buf, "%s \n\t", small_doc(-1));
    parses(buf);
    glibc_malloc_info_free(&mi);
    snprintf(buf, sizeof buf, "%s<malloc version=\"1\"/>", small_doc(-1));
    fails(buf, "an element after </malloc>");
    snprintf(buf, sizeof buf, "%sx", small_doc(-1));
    fails(buf, "text outside a tag");
}
END_TEST

START_TEST(missing_totals)
{
    static const char *const names[] = {
        "<total type=\"fast\">", "<total type=\"rest\">", "<total type=\"mmap\">",
        "<system type=\"current\">", "<system type=\"max\">", "<aspace type=\"total\">",
        "<aspace type=\"mprotect\">",
    };
    for (int i = 0; i < (int)NTOTALS; i++) {
        char want[128];
        snprintf(want, sizeof want, "</malloc> without the totals' %s", names[i]);
        fails(small_doc(i), want);
    }
    /* Given twice is as wrong as missing. */
    char buf[4096];
    snprintf(buf, sizeof buf, "%s%s%s", HEAD, totals[0], small_doc(-1) + strlen(HEAD));
    fails(buf, "<total type=\"fast\"> given twice");
    /* A heap's own, the byte offset of its </heap>. */
    const char *heap = HEAD "<heap nr=\"7\"><total type=\"fast\" count=\"1\" size=\"1\"/></heap>";
    snprintf(buf, sizeof buf, "byte %zu: heap 7 ends without <total type=\"rest\">",
             strlen(heap) - strlen("</heap>"));
    fails(heap, buf);
    /* The empty forms close at once. */
    fails(HEAD "<heap nr=\"3\"/>", "heap 3 ends without <total type=\"fast\">");
    fails("<malloc version=\"1\"/>", "</malloc> without the totals' <total type=\"fast\">");
}
END_TEST

/* ---- what is read however it is written ---- */

START_TEST(attribute_order_and_quotes)
{
    char buf[4096];
    snprintf(buf, sizeof buf,
             "<malloc\nversion='1' >"
             "<heap  nr = '5' extra=\"x\">"
             "<aspace size=\"4\" type=\"mprotect\"/>"
             "<aspace size=\"3\" type=\"total\"/>"
             "<system size=\"2\" type=\"max\"></system>"
             "<system type='current'\tsize='1' />"
             "<total size=\"20\" unknown=\"\" count=\"10\" type=\"rest\"/>"
             "<total count=\"9\" size=\"90\" type=\"fast\"/>"
             "</heap >%s",
             small_doc(-1) + strlen(HEAD));
    parses(buf);
    ck_assert_uint_eq(mi.narenas, 3);
    const struct glibc_arena_info *a = &mi.arenas[0];
    ck_assert_uint_eq(a->nr, 5);
    ck_assert_uint_eq(a->fast_count, 9);
    ck_assert_uint_eq(a->fast_bytes, 90);
    ck_assert_uint_eq(a->rest_count, 10);
    ck_assert_uint_eq(a->rest_bytes, 20);
    ck_assert_uint_eq(a->system_current, 1);
    ck_assert_uint_eq(a->system_max, 2);
    ck_assert_uint_eq(a->aspace_total, 3);
    ck_assert_uint_eq(a->aspace_mprotect, 4);
    ck_assert_uint_eq(glibc_arena_free_bytes(a), 110);
    ck_assert_uint_eq(mi.mmap_count, 3);
    ck_assert_uint_eq(mi.mmap_bytes, 409600);
    glibc_malloc_info_free(&mi);
}
END_TEST

/* Elements and attributes memprof does not know, at any place, are
 * skipped whatever they hold (even attributes that would be wrong on the
 * elements it reads). */
START_TEST(unknown_skipped)
{
    char buf[8192];
    snprintf(buf, sizeof buf,
             "<malloc version=\"1\" arch=\"x86_64\">"
             "<note size=\"big\"><total type=\"fast\" count=\"x\" size=\"y\"/></note>"
             "<heap nr=\"0\" size=\"not a number\">"
             "<sizes><size from=\"a\"/><foo><bar><baz/></bar></foo></sizes>"
             "<total type=\"huge\" count=\"-\"/>"
             "<total type=\"mmap\" count=\"-\"/>"
             "<aspace type=\"subheaps\" size=\"1\"/>"
             "<future-element.v2 x:y=\"1\"/>"
             "%s",
             strstr(HEAP("0"), "<total type=\"fast\""));
    strcat(buf, small_doc(-1) + strlen(HEAD));
    parses(buf);
    ck_assert_uint_eq(mi.narenas, 3);
    ck_assert_uint_eq(mi.arenas[0].fast_count, 1);
    ck_assert_uint_eq(mi.fast_count, 2);
    glibc_malloc_info_free(&mi);
    /* A glibc with no arena list at all still gives totals. */
    snprintf(buf, sizeof buf, "%s", HEAD);
    for (size_t i = 0; i < NTOTALS; i++)
        strcat(buf, totals[i]);
    strcat(buf, "</malloc>");
    parses(buf);
    ck_assert_uint_eq(mi.narenas, 0);
    glibc_malloc_info_free(&mi);
}
END_TEST

/* ---- limits ---- */

START_TEST(depth_limit)
{
    char buf[4096];
    strcpy(buf, HEAD);
    for (int i = 1; i < GLIBC_INFO_MAX_DEPTH; i++)
        strcat(buf, "<a>");
    for (int i = 1; i < GLIBC_INFO_MAX_DEPTH; i++)
        strcat(buf, "</a>");
    for (size_t i = 0; i < NTOTALS; i++)
        strcat(buf, totals[i]);
    strcat(buf, "</malloc>");
    parses(buf);
    glibc_malloc_info_free(&mi);
    strcpy(buf, HEAD);
    for (int i = 0; i < GLIBC_INFO_MAX_DEPTH; i++)
        strcat(buf, "<a>");
    fails(buf, "elements nested deeper than 16");
}
END_TEST

/* HEAD, n heaps, the totals. */
static char *many_heaps(size_t n, size_t *len)
{
    static const char heap[] = HEAP("1");
    size_t cap = strlen(HEAD) + n * strlen(heap) + 1024;
    char *buf = malloc(cap), *w = buf;
    ck_assert_ptr_nonnull(buf);
    w = stpcpy(w, HEAD);
    for (size_t i = 0; i < n; i++)
        w = stpcpy(w, heap);
    for (size_t i = 0; i < NTOTALS; i++)
        w = stpcpy(w, totals[i]);
    w = stpcpy(w, "</malloc>");
    *len = (size_t)(w - buf);
    return buf;
}

START_TEST(arena_limit)
{
    size_t len;
    char *buf = many_heaps(GLIBC_INFO_MAX_ARENAS, &len);
    ck_assert_msg(glibc_malloc_info_parse(buf, len, &mi, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(mi.narenas, GLIBC_INFO_MAX_ARENAS);
    glibc_malloc_info_free(&mi);
    free(buf);
    buf = many_heaps(GLIBC_INFO_MAX_ARENAS + 1, &len);
    ck_assert_int_eq(glibc_malloc_info_parse(buf, len, &mi, &err), -1);
    ck_assert_msg(strstr(err.msg, "more than 65536 arenas"), "%s", err.msg);
    ck_assert_ptr_null(mi.arenas);
    free(buf);
}
END_TEST

START_TEST(free_bytes_saturate)
{
    struct glibc_arena_info a = { .fast_bytes = UINT64_MAX - 1, .rest_bytes = 5 };
    ck_assert_uint_eq(glibc_arena_free_bytes(&a), UINT64_MAX);
}
END_TEST

static Suite *glibc_info_suite(void)
{
    Suite *s = suite_create("glibc_info");
    TCase *tc = tcase_create("read");
    tcase_add_test(tc, real_output);
    tcase_add_test(tc, attribute_order_and_quotes);
    tcase_add_test(tc, unknown_skipped);
    tcase_add_test(tc, free_bytes_saturate);
    suite_add_tcase(s, tc);
    tc = tcase_create("refused");
    tcase_add_test(tc, truncated);
    tcase_add_test(tc, not_terminated);
    tcase_add_test(tc, numbers);
    tcase_add_test(tc, garbage);
    tcase_add_test(tc, missing_totals);
    suite_add_tcase(s, tc);
    tc = tcase_create("limits");
    tcase_add_test(tc, depth_limit);
    tcase_add_test(tc, arena_limit);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(glibc_info_suite)
