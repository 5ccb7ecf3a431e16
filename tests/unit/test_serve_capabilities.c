/* test_serve_capabilities.c - memprof serve's notes at start
 * (serve/capabilities.c): one line per needed capability a root agent
 * lacks, naming it and what it costs, one for its own seccomp filter;
 * nothing for a full set, nor for a non-root agent. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve/capabilities.h"
#include "tests/unit/unit.h"

#define ALL_CAPS 0x1ffffffffffULL

/* The notes for (euid, caps, seccomp), in buf; returns their count. */
static int notes(uid_t euid, uint64_t caps, int seccomp, char *buf, size_t len)
{
    FILE *f = fmemopen(buf, len, "w");
    ck_assert_ptr_nonnull(f);
    int n = serve_capability_notes(euid, caps, seccomp, f);
    fclose(f);
    return n;
}

START_TEST(full_set_says_nothing)
{
    char buf[4096] = "";
    ck_assert_int_eq(notes(0, ALL_CAPS, 0, buf, sizeof buf), 0);
    ck_assert_str_eq(buf, "");
    ck_assert_int_eq(notes(1000, 0, 2, buf, sizeof buf), 0);
}
END_TEST

START_TEST(each_missing_one_named_with_its_cost)
{
    char buf[4096] = "";
    /* SYS_PTRACE (19) only, filtered: three missing, and the filter */
    ck_assert_int_eq(notes(0, 1ULL << 19, 2, buf, sizeof buf), 4);
    ck_assert_ptr_null(strstr(buf, "without CAP_SYS_PTRACE"));
    ck_assert_ptr_nonnull(strstr(buf, "without CAP_SYS_ADMIN: processes under a seccomp filter"));
    ck_assert_ptr_nonnull(strstr(buf, "without CAP_DAC_OVERRIDE: processes of other users"));
    ck_assert_ptr_nonnull(strstr(buf, "without CAP_SYS_NICE: stops run at normal priority"));
    ck_assert_ptr_nonnull(strstr(buf, "runs under a seccomp filter"));
    ck_assert_ptr_nonnull(strstr(buf, "seccomp=unconfined"));
    /* the documented set, unfiltered */
    uint64_t set = (1ULL << 19) | (1ULL << 21) | (1ULL << 1) | (1ULL << 23);
    ck_assert_int_eq(notes(0, set, 0, buf, sizeof buf), 0);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("serve_capabilities");
    TCase *tc = tcase_create("notes");
    tcase_add_test(tc, full_set_says_nothing);
    tcase_add_test(tc, each_missing_one_named_with_its_cost);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(suite)
