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

static struct proc_status parsed(const char *text)
{
    struct proc_status st;
    struct mp_error err;
    ck_assert_int_eq(preflight_parse_status(text, strlen(text), &st, &err), 0);
    return st;
}

static int check(const char *text, struct tracer_identity me, int yama, struct mp_error *err)
{
    struct proc_status st = parsed(text);
    return preflight_check_status(100, &st, &me, yama, err);
}

static const struct tracer_identity root = { .euid = 0, .egid = 0, .cap_sys_ptrace = true };
static const struct tracer_identity user = { .euid = 1000, .egid = 1000 };
static const struct tracer_identity root_admin = {
    .euid = 0, .egid = 0, .cap_sys_ptrace = true, .cap_sys_admin = true,
};

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
    ck_assert_int_eq(check(status_text('R', 0, 0, 1000), user, 0, &err), 0);
    ck_assert_int_eq(check(status_text('R', 0, 2, 0), root_admin, 0, &err), 0);
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
    char caps[2048];
    snprintf(caps, sizeof caps, "%s", status_text('S', 0, 0, 1000));
    char *cap = strstr(caps, "CapEff:\t0000000000000000");
    ck_assert_ptr_nonnull(cap);
    memcpy(cap + 8, "00000000a80425fb", 16);
    ck_assert(check(caps, user, 0, &err) < 0);
    ck_assert_ptr_nonnull(strstr(err.msg, "holds capabilities memprof lacks (CapPrm "
                                          "a80425fb)"));
    ck_assert_ptr_nonnull(strstr(err.msg, "needs CAP_SYS_PTRACE"));
}
END_TEST

/* Copy status text with one line's value replaced. */
static const char *with_line(const char *text, const char *key, const char *value)
{
    static char buf[1024];
    const char *at = strstr(text, key);
    ck_assert_ptr_nonnull(at);
    const char *eol = strchr(at, '\n');
    snprintf(buf, sizeof buf, "%.*s%s\t%s%s", (int)(at - text), text, key, value, eol);
    return buf;
}

START_TEST(parses_nspid_and_permitted_caps)
{
    char t[2048];
    snprintf(t, sizeof t, "%sNSpid:\t4242\t17\t1\nCapPrm:\t00000000000000ff\n",
             status_text('S', 0, 0, 0));
    struct proc_status st = parsed(t);
    ck_assert_int_eq(st.nspid_inner, 1);
    ck_assert(st.have_cap_prm);
    ck_assert_uint_eq(st.cap_prm, 0xff);
}
END_TEST

/* Each permission refusal names its real cause (issue 13.5). */
START_TEST(permission_causes)
{
    struct mp_error err;
    /* setuid: real 1000, effective and saved 0 */
    const char *t = with_line(status_text('S', 0, 0, 1000), "Uid:", "1000\t0\t0\t0");
    ck_assert(check(t, user, 0, &err) < 0);
    ck_assert_ptr_nonnull(strstr(err.msg, "real and effective ids differ"));
    ck_assert_ptr_nonnull(strstr(err.msg, "uid real 1000 effective 0 saved 0"));
    ck_assert_ptr_null(strstr(err.msg, "sudo -u"));
    /* non-dumpable, as its own user */
    struct proc_status st = parsed(status_text('S', 0, 0, 1000));
    st.non_dumpable = true;
    ck_assert(preflight_check_status(100, &st, &user, 0, &err) < 0);
    ck_assert_ptr_nonnull(strstr(err.msg, "non-dumpable"));
    ck_assert_ptr_nonnull(strstr(err.msg, "CAP_SYS_PTRACE"));
    /* permitted but not effective capabilities, as its own user */
    char caps[2048];
    snprintf(caps, sizeof caps, "%sCapPrm:\t0000000000003000\n", status_text('S', 0, 0, 1000));
    ck_assert(check(caps, user, 0, &err) < 0);
    ck_assert_ptr_nonnull(strstr(err.msg, "CapPrm 3000"));
    /* a rootless container (unshare -U -r) of memprof's own user: all
     * capabilities, counted in a namespace memprof's user owns */
    snprintf(caps, sizeof caps, "%sCapPrm:\t000001ffffffffff\n",
             with_line(status_text('S', 0, 0, 1000), "CapEff:", "000001ffffffffff"));
    struct tracer_identity owner = user;
    owner.owns_target_userns = true;
    ck_assert_int_eq(check(caps, owner, 0, &err), 0);
}
END_TEST

/* A seccomp filter needs CAP_SYS_ADMIN to suspend: the message says which
 * part memprof lacks (issue 13.5). */
START_TEST(seccomp_causes)
{
    struct mp_error err;
    const char *t = status_text('S', 0, 2, 0);
    struct tracer_identity no_admin = root_admin;
    no_admin.cap_sys_admin = false;
    ck_assert(check(t, no_admin, 0, &err) < 0);
    ck_assert_ptr_nonnull(strstr(err.msg, "runs as root but without CAP_SYS_ADMIN"));
    ck_assert_ptr_null(strstr(err.msg, "run memprof as root"));
    struct tracer_identity filtered = root_admin;
    filtered.seccomp = 2;
    ck_assert(check(t, filtered, 0, &err) < 0);
    ck_assert_ptr_nonnull(strstr(err.msg, "memprof itself runs under seccomp"));
    ck_assert(check(status_text('S', 0, 2, 1000), user, 0, &err) < 0);
    ck_assert_ptr_nonnull(strstr(err.msg, "CAP_SYS_ADMIN: run memprof as root"));
}
END_TEST

/* memprof as root in a container or DaemonSet with a reduced capability
 * set: the refusal names the capability and how to give it, never "run
 * memprof as root" (it does), and a filtered memprof without CAP_SYS_ADMIN
 * hears of both parts at once. */
START_TEST(container_capabilities)
{
    struct mp_error err;
    struct tracer_identity root_noptrace = { .euid = 0, .egid = 0 };
    /* another process of root's holding capabilities memprof lacks */
    char caps[2048];
    snprintf(caps, sizeof caps, "%sCapPrm:\t000001ffffffffff\n",
             with_line(status_text('S', 0, 0, 0), "CapEff:", "000001ffffffffff"));
    ck_assert(check(caps, root_noptrace, 0, &err) < 0);
    ck_assert_ptr_nonnull(strstr(err.msg, "runs as root but without CAP_SYS_PTRACE"));
    ck_assert_ptr_nonnull(strstr(err.msg, "--cap-add SYS_PTRACE"));
    ck_assert_ptr_null(strstr(err.msg, "run memprof as root"));
    /* another user's process */
    ck_assert(check(status_text('S', 0, 0, 1000), root_noptrace, 0, &err) < 0);
    ck_assert_ptr_nonnull(strstr(err.msg, "give it CAP_SYS_PTRACE"));
    ck_assert_ptr_null(strstr(err.msg, "as root"));
    /* Yama 2 */
    ck_assert(check(status_text('S', 0, 0, 0), root_noptrace, 2, &err) < 0);
    ck_assert_ptr_nonnull(strstr(err.msg, "runs as root but without CAP_SYS_PTRACE"));
    /* a filtered target, memprof filtered (a container's default seccomp
     * profile) and without CAP_SYS_ADMIN */
    struct tracer_identity boxed = { .euid = 0, .cap_sys_ptrace = true, .seccomp = 2 };
    ck_assert(check(status_text('S', 0, 2, 0), boxed, 0, &err) < 0);
    ck_assert_ptr_nonnull(strstr(err.msg, "runs under a seccomp filter and without CAP_SYS_ADMIN"));
    ck_assert_ptr_nonnull(strstr(err.msg, "seccomp=unconfined --cap-add SYS_ADMIN"));
    /* filtered, with CAP_SYS_ADMIN */
    boxed.cap_sys_admin = true;
    ck_assert(check(status_text('S', 0, 2, 0), boxed, 0, &err) < 0);
    ck_assert_ptr_nonnull(strstr(err.msg, "memprof itself runs under seccomp"));
    ck_assert_ptr_nonnull(strstr(err.msg, "seccomp=unconfined"));
    ck_assert_ptr_null(strstr(err.msg, "--cap-add SYS_ADMIN"));
}
END_TEST

/* A tracer that is memprof is named as memprof, never "another debugger". */
START_TEST(names_a_memprof_tracer)
{
    struct mp_error err;
    struct proc_status st = parsed(status_text('S', 77, 0, 0));
    strcpy(st.tracer_comm, "memprof");
    ck_assert(preflight_check_status(100, &st, &root, 0, &err) < 0);
    ck_assert_ptr_nonnull(strstr(err.msg, "traced by memprof (pid 77)"));
    ck_assert_ptr_null(strstr(err.msg, "debugger"));
    strcpy(st.tracer_comm, "gdb");
    ck_assert(preflight_check_status(100, &st, &root, 0, &err) < 0);
    ck_assert_ptr_nonnull(strstr(err.msg, "traced by process 77 (gdb)"));
}
END_TEST

/* nsenter -m without -p: the /proc seen is another pid namespace's. */
START_TEST(refuses_a_foreign_proc)
{
    struct mp_error err;
    ck_assert_int_eq(preflight_check_proc_view(4242, "4242", true, &err), 0);
    ck_assert(preflight_check_proc_view(4242, "17", true, &err) < 0);
    ck_assert_ptr_nonnull(strstr(err.msg, "another pid namespace"));
    ck_assert_ptr_nonnull(strstr(err.msg, "nsenter -m"));
    /* memprof has no pid in that namespace: /proc/self does not resolve */
    ck_assert(preflight_check_proc_view(4242, NULL, true, &err) < 0);
    ck_assert_ptr_nonnull(strstr(err.msg, "nsenter -m"));
    ck_assert(preflight_check_proc_view(4242, NULL, false, &err) < 0);
    ck_assert_ptr_nonnull(strstr(err.msg, "not mounted"));
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
    tcase_add_test(tc, container_capabilities);
    tcase_add_test(tc, refuses_threads_and_32bit);
    tcase_add_test(tc, parses_nspid_and_permitted_caps);
    tcase_add_test(tc, permission_causes);
    tcase_add_test(tc, seccomp_causes);
    tcase_add_test(tc, names_a_memprof_tracer);
    tcase_add_test(tc, refuses_a_foreign_proc);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(preflight_suite)
