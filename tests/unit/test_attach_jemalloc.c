/* test_attach_jemalloc.c - the jemalloc symbol rule: a defined function
 * named ^(.*_)?mallctl$ with a sibling <prefix>mallctlnametomib. */
#include <elf.h>
#include <string.h>

#include "allocator/jemalloc/find.h"
#include "tests/unit/unit.h"

START_TEST(name_rule)
{
    char p[64];
    ck_assert(jemalloc_mallctl_name("mallctl", p, sizeof p));
    ck_assert_str_eq(p, "");
    ck_assert(jemalloc_mallctl_name("je_mallctl", p, sizeof p));
    ck_assert_str_eq(p, "je_");
    ck_assert(jemalloc_mallctl_name("_rjem_mallctl", p, sizeof p));
    ck_assert_str_eq(p, "_rjem_");
    ck_assert(jemalloc_mallctl_name("duckdb_je_mallctl", p, sizeof p));
    ck_assert(!jemalloc_mallctl_name("mymallctl", p, sizeof p));
    ck_assert(!jemalloc_mallctl_name("mallctlbymib", p, sizeof p));
    ck_assert(!jemalloc_mallctl_name("mallctl_", p, sizeof p));
    ck_assert(!jemalloc_mallctl_name("allctl", p, sizeof p));
    /* only identifier characters: the prefix is printed and names a variable */
    ck_assert(!jemalloc_mallctl_name("evil\x1b[31m_mallctl", p, sizeof p));
    ck_assert(!jemalloc_mallctl_name("a.b_mallctl", p, sizeof p));
}
END_TEST

/* A hand-made object: symbols sorted by value as elf_object keeps them. */
static struct elf_symbol syms[] = {
    { 0x100, 16, "je_mallctl", STT_FUNC, STB_GLOBAL, true, false },
    { 0x200, 16, "je_mallctlnametomib", STT_FUNC, STB_GLOBAL, true, false },
    { 0x300, 16, "other_mallctl", STT_FUNC, STB_GLOBAL, true, false },
    { 0x400, 16, "x_mallctl", STT_OBJECT, STB_GLOBAL, true, false },
    { 0x500, 16, "x_mallctlnametomib", STT_FUNC, STB_GLOBAL, true, false },
    { 0, 0, "mallctl", STT_FUNC, STB_GLOBAL, false, true },
    { 0, 0, "mallctlnametomib", STT_FUNC, STB_GLOBAL, false, true },
};

START_TEST(sibling_and_definition_required)
{
    struct elf_object obj = { .syms = syms, .nsyms = sizeof syms / sizeof syms[0] };
    char p[64];
    ck_assert(jemalloc_is_mallctl(&obj, &syms[0], p, sizeof p));
    ck_assert_str_eq(p, "je_");
    ck_assert(!jemalloc_is_mallctl(&obj, &syms[2], p, sizeof p)); /* no sibling */
    ck_assert(!jemalloc_is_mallctl(&obj, &syms[3], p, sizeof p)); /* not a function */
    ck_assert(!jemalloc_is_mallctl(&obj, &syms[5], p, sizeof p)); /* undefined import */
}
END_TEST

static Suite *jemalloc_suite(void)
{
    Suite *s = suite_create("attach_jemalloc");
    TCase *tc = tcase_create("symbols");
    tcase_add_test(tc, name_rule);
    tcase_add_test(tc, sibling_and_definition_required);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(jemalloc_suite)
