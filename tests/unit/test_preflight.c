/* test_preflight.c - attach/preflight: /proc/PID/status parsing and every
 * refusal it leads to, each with its reason. */
#include <elf.h>
#include <stdio.h>
#include <string.h>

#include "attach/preflight.h"
#include "tests/unit/unit.h"

static const char *status_text(char state, int tracer, int seccomp, unsigned uid)
{
    static char buf[1024];
    snprintf(buf, sizeof buf,
             "Name:\tredis-server\nUmask:\t0022\nState:\t%c (x)\nTgid:\t100\nPid:\t100\n"
             "TracerPid:\t%d\nUid:\t%u\t%u\t%u\t%u\nGid:\t%u\t%u\t%u\t%u\n"
             "CapEff:\t0000000000000000\nSeccomp:\t%d\n",
             state, tracer, uid, uid, uid, uid, uid, uid, uid, uid, seccomp);
    return buf;
}

static int check(const char *text, struct tracer_identity me, int yama, struct mp_error *err)
{
    struct proc_status st;
    ck_assert_int_eq(preflight_parse_status(text, strlen(text), &st, err), 0);
    return preflight_check_status(100, &st, &me, yama, err);
}

static const struct tracer_identity root = { 0, 0, true };
static const struct tracer_identity user = { 1000, 1000, false };

START_TEST(parses_fields)
{
    struct proc_status st;
    struct mp_error err;
    const char *t = status_text('S', 42, 2, 1000);
    ck_assert_int_eq(preflight_parse_status(t, strlen(t), &st, &err), 0);
    ck_assert_str_eq(st.name, "redis-server");
    ck_assert_int_eq(st.state, 'S');
    ck_assert_int_eq(st.tgid, 100);
    ck_assert_int_eq(st.tracer_pid, 42);
    ck_assert_int_eq(st.seccomp, 2);
    ck_assert_uint_eq(st.uid[1], 1000);
    ck_assert(preflight_parse_status("hello\n", 6, &st, &err) < 0);
}
END_TEST

START_TEST(accepts_sleeping_untraced)
{
    struct mp_error err;
    ck_assert_int_eq(check(status_text('S', 0, 0, 0), root, 1, &err), 0);
    ck_assert_int_eq(check(status_text('R', 0, 2, 1000), user, 0, &err), 0);
}
END_TEST

START_TEST(refuses_each_reason)
{
    struct mp_error err;
    ck_assert(check(status_text('Z', 0, 0, 0), root, 0, &err) < 0);
    ck_assert_ptr_nonnull(strstr(err.msg, "zombie"));
    ck_assert(check(status_text('T', 0, 0, 0), root, 0, &err) < 0);
    ck_assert_ptr_nonnull(strstr(err.msg, "kill -CONT 100"));
    ck_assert(check(status_text('t', 0, 0, 0), root, 0, &err) < 0);
    ck_assert_ptr_nonnull(strstr(err.msg, "debugger"));
    ck_assert(check(status_text('S', 77, 0, 0), root, 0, &err) < 0);
    ck_assert_ptr_nonnull(strstr(err.msg, "already traced by process 77"));
    ck_assert(check(status_text('S', 0, 1, 0), root, 0, &err) < 0);
    ck_assert_ptr_nonnull(strstr(err.msg, "strict seccomp"));
    ck_assert(check(status_text('S', 0, 0, 0), user, 0, &err) < 0);
    ck_assert_ptr_nonnull(strstr(err.msg, "CAP_SYS_PTRACE"));
    ck_assert(check(status_text('S', 0, 0, 1000), user, 1, &err) < 0);
    ck_assert_ptr_nonnull(strstr(err.msg, "ptrace_scope is 1"));
    ck_assert(check(status_text('S', 0, 0, 0), root, 3, &err) < 0);
    ck_assert_ptr_nonnull(strstr(err.msg, "disabled"));
    /* same user, but the process holds capabilities memprof lacks */
    char caps[1024];
    snprintf(caps, sizeof caps, "%s", status_text('S', 0, 0, 1000));
    char *cap = strstr(caps, "CapEff:\t0000000000000000");
    ck_assert_ptr_nonnull(cap);
    memcpy(cap + 8, "00000000a80425fb", 16);
    ck_assert(check(caps, user, 0, &err) < 0);
    ck_assert_ptr_nonnull(strstr(err.msg, "holds capabilities (CapEff a80425fb) memprof "
                                          "lacks: run memprof as root"));
}
END_TEST

START_TEST(refuses_threads_and_32bit)
{
    struct mp_error err;
    const char *t = "Name:\tx\nState:\tS\nTgid:\t99\nTracerPid:\t0\n";
    ck_assert(check(t, root, 0, &err) < 0);
    ck_assert_ptr_nonnull(strstr(err.msg, "thread of process 99"));
    Elf64_Ehdr h = { 0 };
    memcpy(h.e_ident, ELFMAG, SELFMAG);
    h.e_ident[EI_CLASS] = ELFCLASS32;
    ck_assert(preflight_check_elf_header(5, (unsigned char *)&h, sizeof h, &err) < 0);
    ck_assert_ptr_nonnull(strstr(err.msg, "32-bit"));
    h.e_ident[EI_CLASS] = ELFCLASS64;
    h.e_machine = EM_X86_64;
    ck_assert_int_eq(preflight_check_elf_header(5, (unsigned char *)&h, sizeof h, &err), 0);
}
END_TEST

static Suite *preflight_suite(void)
{
    Suite *s = suite_create("preflight");
    TCase *tc = tcase_create("status");
    tcase_add_test(tc, parses_fields);
    tcase_add_test(tc, accepts_sleeping_untraced);
    tcase_add_test(tc, refuses_each_reason);
    tcase_add_test(tc, refuses_threads_and_32bit);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(preflight_suite)
