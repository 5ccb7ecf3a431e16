/* test_mallctl.c - the mallctl table, value parsing and error sentences. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allocator/jemalloc/mallctl.h"
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

START_TEST(failure_is_no_profiling)
{
    /* no config.prof: every prof name's ENOENT */
    ck_assert(mallctl_failure_is_no_profiling("prof.active", ENOENT, false, false));
    ck_assert(mallctl_failure_is_no_profiling("prof.dump", ENOENT, false, false));
    /* no opt.prof: prof.dump's EFAULT is that, not the filesystem */
    ck_assert(mallctl_failure_is_no_profiling("prof.dump", EFAULT, true, false));
    ck_assert(!mallctl_failure_is_no_profiling("prof.dump", EFAULT, true, true));
    ck_assert(!mallctl_failure_is_no_profiling("stats.allocated", ENOENT, false, false));
    ck_assert(!mallctl_failure_is_no_profiling("prof.active", EINVAL, false, false));
}
END_TEST

START_TEST(sampling_overhead)
{
    /* FIELD-NOTES 4: ~3 % at 19, 25 % at 16, 400 % at 12, while 2^lg is
     * well above the average allocation (64 B here), with or without a
     * count of the live allocations. */
    double mib = 1048576.0;
    struct mallctl_sampling_cost c;
    uint64_t bytes = 100 * 1048576, count = bytes / 64;
    mallctl_sampling_cost(bytes, 0, 19, &c);
    ck_assert_double_eq_tol(c.extra_bytes / mib, 3.125, 1e-9);
    ck_assert(!c.every_allocation);
    mallctl_sampling_cost(bytes, count, 19, &c);
    ck_assert_double_eq_tol(c.ratio, 0.03125, 1e-4);
    mallctl_sampling_cost(bytes, count, 16, &c);
    ck_assert_double_eq_tol(c.ratio, 0.25, 1e-3);
    mallctl_sampling_cost(bytes, count, 12, &c);
    ck_assert_double_eq_tol(c.ratio, 4.0, 0.1);
    ck_assert(!c.every_allocation);
}
END_TEST

START_TEST(sampling_overhead_every_allocation)
{
    /* Rate 0 samples every allocation: never the formula's 1,638,400 %,
     * at most 16 KiB per live allocation, and said as such. */
    struct mallctl_sampling_cost c;
    uint64_t bytes = 100 * 1048576, count = bytes / 64;
    mallctl_sampling_cost(bytes, count, 0, &c);
    ck_assert(c.every_allocation);
    ck_assert(c.extra_bytes <= 16384.0 * (double)count);
    ck_assert_double_eq_tol(c.extra_bytes, 16384.0 * (double)count, 1.0);
    ck_assert_double_eq_tol(c.ratio, 256.0, 1e-6);  /* 16 KiB / 64 B */
    /* without a count there is no bound to give: no estimate at all */
    mallctl_sampling_cost(bytes, 0, 0, &c);
    ck_assert(c.every_allocation);
    ck_assert(c.extra_bytes < 0 && c.ratio < 0);
    /* 2^6 = the average allocation: nearly every one sampled */
    mallctl_sampling_cost(bytes, count, 6, &c);
    ck_assert(c.every_allocation);
    ck_assert(c.extra_bytes < 16384.0 * (double)count);
    /* no live allocation: nothing to pay */
    mallctl_sampling_cost(0, 0, 4, &c);
    ck_assert_double_eq_tol(c.extra_bytes, 0, 1e-9);
}
END_TEST

/* The whole of a stream, malloc'd. */
static char *slurp(FILE *f)
{
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    size_t n;
    while (buf && (n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += n;
        if (len + 1 == cap)
            buf = realloc(buf, cap *= 2);
    }
    if (buf)
        buf[len] = '\0';
    return buf;
}

/* The committed table is what the generator makes of the installed page
 * (tools/deps.sh installs libjemalloc-dev, which holds it). */
START_TEST(table_matches_installed_page)
{
    const char *src = getenv("SRCDIR") ? getenv("SRCDIR") : ".";
    const char *page = getenv("JEMALLOC_MAN") ? getenv("JEMALLOC_MAN")
                                              : "/usr/share/man/man3/jemalloc.3.gz";
    char cmd[4096], path[4096];
    snprintf(cmd, sizeof cmd, "python3 '%s/tools/gen_mallctl_table.py' '%s'", src, page);
    snprintf(path, sizeof path, "%s/allocator/jemalloc/mallctl_names.c", src);
    FILE *gen = popen(cmd, "r");
    ck_assert_ptr_nonnull(gen);
    char *generated = slurp(gen);
    ck_assert_int_eq(pclose(gen), 0);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    char *committed = slurp(f);
    fclose(f);
    ck_assert_ptr_nonnull(generated);
    ck_assert_ptr_nonnull(committed);
    ck_assert_msg(strcmp(generated, committed) == 0,
                  "allocator/jemalloc/mallctl_names.c differs from what tools/gen_mallctl_table.py "
                  "makes of %s: run 'make mallctl-table'", page);
    free(generated);
    free(committed);
}
END_TEST

START_TEST(table_has_the_whole_namespace)
{
    ck_assert_uint_ge(mallctl_table_page_entries, 170);
    size_t rows = 0;
    for (const struct mallctl_info *m = mallctl_table; m->name; m++)
        rows++;
    ck_assert_uint_ge(rows, mallctl_table_page_entries);
    const struct mallctl_info *m = mallctl_lookup("prof.prefix");
    ck_assert_int_eq(m->type, MALLCTL_STRING);
    ck_assert_int_eq(m->access, MALLCTL_W);
    ck_assert_str_eq(m->requires, "--enable-prof");
    ck_assert_int_eq(mallctl_lookup("thread.prof.name")->access, MALLCTL_R_OR_W);
    ck_assert_int_eq(mallctl_lookup("arena.0.reset")->access, MALLCTL_ACTION);
    ck_assert_int_eq(mallctl_lookup("stats.mutexes.ctl.max_num_thds")->type, MALLCTL_U32);
    ck_assert_int_eq(mallctl_lookup("stats.arenas.0.extents.3.dirty_bytes")->type, MALLCTL_SIZE);
    m = mallctl_lookup("arenas.create");
    ck_assert_int_eq(m->type, MALLCTL_UNSIGNED);
    ck_assert_int_eq(m->write_type, MALLCTL_POINTER);
    ck_assert_ptr_null(mallctl_lookup("stats.mutexes.ctl.{counter}"));
}
END_TEST

static int check(const char *name, bool read, size_t oldlen, bool write, size_t newlen,
                 const char *string, struct mp_error *err)
{
    struct mallctl_shape sh = {read, oldlen, write, newlen, string};
    return mallctl_check_call(name, mallctl_lookup(name), &sh, err);
}

START_TEST(call_shapes)
{
    struct mp_error err;
    /* a read of a write-only name: refused, saying how to write it */
    ck_assert_int_eq(check("prof.prefix", true, 8, false, 0, NULL, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "mallctl prof.prefix VALUE"));
    /* and a write without a value where jemalloc needs one */
    ck_assert_int_eq(check("prof.prefix", false, 0, false, 0, NULL, &err), -1);
    ck_assert_int_eq(check("prof.prefix", false, 0, true, 8, "x", &err), 0);
    /* prof.dump and prof.reset take NULL as documented */
    ck_assert_int_eq(check("prof.dump", false, 0, false, 0, NULL, &err), 0);
    ck_assert_int_eq(check("prof.reset", false, 0, false, 0, NULL, &err), 0);
    /* read or write, never both */
    ck_assert_int_eq(check("thread.prof.name", true, 8, true, 8, "a", &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "never both"));
    ck_assert_int_eq(check("thread.prof.name", true, 8, false, 0, NULL, &err), 0);
    ck_assert_int_eq(check("thread.prof.name", false, 0, true, 8, "a\x1b", &err), -1);
    /* lengths follow the type */
    ck_assert_int_eq(check("prof.active", true, 8, false, 0, NULL, &err), -1);
    ck_assert_int_eq(check("prof.active", true, 1, true, 4, NULL, &err), -1);
    ck_assert_int_eq(check("prof.active", true, 1, true, 1, NULL, &err), 0);
    ck_assert_int_eq(check("opt.prof", false, 0, true, 1, NULL, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "read-only"));
    ck_assert_int_eq(check("prof.active", false, 0, false, 0, NULL, &err), -1);
    /* actions take nothing; addresses are never written */
    ck_assert_int_eq(check("arena.4096.purge", false, 0, false, 0, NULL, &err), 0);
    ck_assert_int_eq(check("arena.4096.purge", true, 8, false, 0, NULL, &err), -1);
    ck_assert_int_eq(check("arena.0.extent_hooks", false, 0, true, 8, NULL, &err), -1);
    /* arena indices */
    ck_assert_int_eq(check("arena.4097.purge", false, 0, false, 0, NULL, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "MALLCTL_ARENAS_ALL"));
    ck_assert_int_eq(check("stats.arenas.4097.pactive", true, 8, false, 0, NULL, &err), 0);
    ck_assert_int_eq(check("stats.arenas.4098.pactive", true, 8, false, 0, NULL, &err), -1);
    ck_assert_int_eq(check("arenas.bin.99999999999.size", true, 8, false, 0, NULL, &err), -1);
    /* unknown names need an entry made from --type */
    struct mallctl_shape sh = {true, 8, false, 0, NULL};
    ck_assert_int_eq(mallctl_check_call("new.name", NULL, &sh, &err), -1);
    bool force;
    ck_assert_ptr_nonnull(mallctl_side_effect("arena.3.reset", &force));
    ck_assert(force);
    ck_assert_ptr_null(mallctl_side_effect("arena.3.purge", &force));
}
END_TEST

START_TEST(no_profiling_advice_fits_the_build)
{
    struct mp_error err;
    mallctl_explain_no_profiling(false, "_RJEM_MALLOC_CONF", &err);
    ck_assert_ptr_nonnull(strstr(err.msg, "profiling"));
    ck_assert_ptr_nonnull(strstr(err.msg, "rebuilt"));
    ck_assert_ptr_null(strstr(err.msg, "MALLOC_CONF"));
    mallctl_explain_no_profiling(true, "_RJEM_MALLOC_CONF", &err);
    ck_assert_ptr_nonnull(strstr(err.msg, "_RJEM_MALLOC_CONF=prof:true"));
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
    tcase_add_test(tc, failure_is_no_profiling);
    tcase_add_test(tc, sampling_overhead);
    tcase_add_test(tc, sampling_overhead_every_allocation);
    tcase_add_test(tc, table_matches_installed_page);
    tcase_add_test(tc, table_has_the_whole_namespace);
    tcase_add_test(tc, call_shapes);
    tcase_add_test(tc, no_profiling_advice_fits_the_build);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(mallctl_suite)
