/* test_mallctl.c - the mallctl table, value parsing and error sentences. */
#include <errno.h>
#include <string.h>

#include "lib/mallctl.h"
#include "tests/unit/unit.h"

START_TEST(lookup_known_and_indexed)
{
    const struct mallctl_info *m = mallctl_lookup("prof.active");
    ck_assert_ptr_nonnull(m);
    ck_assert_int_eq(m->type, MALLCTL_BOOL);
    ck_assert_int_eq(m->access, MALLCTL_RW);
    ck_assert_int_eq(mallctl_lookup("opt.lg_prof_interval")->type, MALLCTL_SSIZE);
    ck_assert_int_eq(mallctl_lookup("prof.dump")->access, MALLCTL_W);
    m = mallctl_lookup("arena.4096.purge");
    ck_assert_ptr_nonnull(m);
    ck_assert_int_eq(m->type, MALLCTL_VOID);
    ck_assert_ptr_null(mallctl_lookup("arena..purge"));
    ck_assert_ptr_null(mallctl_lookup("arena.x.purge"));
    ck_assert_ptr_null(mallctl_lookup("prof.activ"));
    ck_assert_ptr_null(mallctl_lookup("prof.active.x"));
}
END_TEST

START_TEST(types)
{
    enum mallctl_type t;
    struct mp_error err;
    ck_assert_int_eq(mallctl_type_parse("ssize_t", &t, &err), 0);
    ck_assert_int_eq(t, MALLCTL_SSIZE);
    ck_assert_int_eq(mallctl_type_parse("float", &t, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "float"));
    ck_assert_uint_eq(mallctl_type_size(MALLCTL_BOOL), 1);
    ck_assert_uint_eq(mallctl_type_size(MALLCTL_UNSIGNED), 4);
    ck_assert_uint_eq(mallctl_type_size(MALLCTL_STRING), 8);
}
END_TEST

START_TEST(values_round_trip)
{
    char buf[8], out[32];
    size_t len;
    struct mp_error err;
    ck_assert_int_eq(mallctl_value_parse(MALLCTL_BOOL, "on", buf, &len, &err), 0);
    ck_assert_uint_eq(len, 1);
    mallctl_value_format(MALLCTL_BOOL, buf, out, sizeof out);
    ck_assert_str_eq(out, "true");
    ck_assert_int_eq(mallctl_value_parse(MALLCTL_SSIZE, "-1", buf, &len, &err), 0);
    mallctl_value_format(MALLCTL_SSIZE, buf, out, sizeof out);
    ck_assert_str_eq(out, "-1");
    ck_assert_int_eq(mallctl_value_parse(MALLCTL_SIZE, "0x10", buf, &len, &err), 0);
    mallctl_value_format(MALLCTL_SIZE, buf, out, sizeof out);
    ck_assert_str_eq(out, "16");
    ck_assert_int_eq(mallctl_value_parse(MALLCTL_UNSIGNED, "4096", buf, &len, &err), 0);
    ck_assert_uint_eq(len, 4);
    mallctl_value_format(MALLCTL_UNSIGNED, buf, out, sizeof out);
    ck_assert_str_eq(out, "4096");
}
END_TEST

START_TEST(values_rejected)
{
    char buf[8];
    size_t len;
    struct mp_error err;
    ck_assert_int_eq(mallctl_value_parse(MALLCTL_BOOL, "maybe", buf, &len, &err), -1);
    ck_assert_int_eq(mallctl_value_parse(MALLCTL_SIZE, "-3", buf, &len, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "negative"));
    ck_assert_int_eq(mallctl_value_parse(MALLCTL_SIZE, "12abc", buf, &len, &err), -1);
    ck_assert_int_eq(mallctl_value_parse(MALLCTL_UNSIGNED, "4294967296", buf, &len, &err), -1);
    ck_assert_int_eq(mallctl_value_parse(MALLCTL_U64, "99999999999999999999999", buf, &len, &err), -1);
    ck_assert_int_eq(mallctl_value_parse(MALLCTL_STRING, "x", buf, &len, &err), -1);
}
END_TEST

START_TEST(explain_profiling_not_enabled)
{
    struct mp_error err;
    mallctl_explain("prof.active", ENOENT, true, "MALLOC_CONF", &err);
    ck_assert_ptr_nonnull(strstr(err.msg, "not enabled"));
    ck_assert_ptr_nonnull(strstr(err.msg, "MALLOC_CONF=prof:true,prof_active:false"));
    mallctl_explain("prof.dump", ENOENT, true, "JE_MALLOC_CONF", &err);
    ck_assert_ptr_nonnull(strstr(err.msg, "JE_MALLOC_CONF=prof:true"));
}
END_TEST

START_TEST(explain_other_codes)
{
    struct mp_error err;
    mallctl_explain("stats.nonesuch", ENOENT, false, "MALLOC_CONF", &err);
    ck_assert_ptr_nonnull(strstr(err.msg, "no such control"));
    mallctl_explain("opt.prof", EPERM, true, "MALLOC_CONF", &err);
    ck_assert_ptr_nonnull(strstr(err.msg, "read-only"));
    ck_assert_ptr_nonnull(strstr(err.msg, "start"));
    mallctl_explain("prof.dump", EFAULT, true, "MALLOC_CONF", &err);
    ck_assert_ptr_nonnull(strstr(err.msg, "could not create or write"));
    mallctl_explain("prof.reset", EINVAL, true, "MALLOC_CONF", &err);
    ck_assert_ptr_nonnull(strstr(err.msg, "rejected"));
    mallctl_explain("epoch", EAGAIN, true, "MALLOC_CONF", &err);
    ck_assert_ptr_nonnull(strstr(err.msg, "try again"));
}
END_TEST

START_TEST(conf_var_follows_prefix)
{
    char buf[64];
    mallctl_conf_var("", buf, sizeof buf);
    ck_assert_str_eq(buf, "MALLOC_CONF");
    mallctl_conf_var("je_", buf, sizeof buf);
    ck_assert_str_eq(buf, "JE_MALLOC_CONF");
    mallctl_conf_var("_rjem_", buf, sizeof buf);
    ck_assert_str_eq(buf, "_RJEM_MALLOC_CONF");
}
END_TEST

START_TEST(sampling_overhead)
{
    /* FIELD-NOTES 4: ~3 % at 19, 25 % at 16, 400 % at 12. */
    double mib = 1048576.0;
    ck_assert_double_eq_tol(mallctl_sampling_overhead(100 * 1048576, 19) / mib, 3.125, 1e-9);
    ck_assert_double_eq_tol(mallctl_sampling_overhead(100 * 1048576, 16) / mib, 25.0, 1e-9);
    ck_assert_double_eq_tol(mallctl_sampling_overhead(100 * 1048576, 12) / mib, 400.0, 1e-9);
}
END_TEST

static Suite *mallctl_suite(void)
{
    Suite *s = suite_create("mallctl");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, lookup_known_and_indexed);
    tcase_add_test(tc, types);
    tcase_add_test(tc, values_round_trip);
    tcase_add_test(tc, values_rejected);
    tcase_add_test(tc, explain_profiling_not_enabled);
    tcase_add_test(tc, explain_other_codes);
    tcase_add_test(tc, conf_var_follows_prefix);
    tcase_add_test(tc, sampling_overhead);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(mallctl_suite)
