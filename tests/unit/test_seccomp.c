/* test_seccomp.c - lib/seccomp (the filter checker and evaluator) and the
 * sampler's decision (allocator/sampler/seccomp_check.c) on real filters
 * built by libseccomp, as container runtimes and systemd build theirs:
 * a podman/Docker-like default (ERRNO(EPERM) by default, an allow list), a
 * filter killing ppoll, an arch check, filters on arguments, stacked
 * filters; and programs the kernel would refuse, refused. */
#include <errno.h>
#include <linux/audit.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "allocator/sampler/seccomp_check.h"
#include "lib/seccomp/seccomp_bpf.h"
#include "tests/unit/unit.h"

#if defined(__x86_64__)
#define NATIVE AUDIT_ARCH_X86_64
#define FOREIGN_SCMP SCMP_ARCH_AARCH64
#else
#define NATIVE AUDIT_ARCH_AARCH64
#define FOREIGN_SCMP SCMP_ARCH_X86_64
#endif

struct prog {
    struct seccomp_insn *v;
    size_t n;
};

/* The BPF program libseccomp makes of ctx (freed by the caller). */
static struct prog export(scmp_filter_ctx ctx)
{
    int fd = memfd_create("bpf", 0);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(seccomp_export_bpf(ctx, fd), 0);
    off_t len = lseek(fd, 0, SEEK_END);
    ck_assert_int_gt(len, 0);
    struct prog p = {malloc((size_t)len), (size_t)len / sizeof(struct seccomp_insn)};
    ck_assert_int_eq(pread(fd, p.v, (size_t)len, 0), len);
    close(fd);
    seccomp_release(ctx);
    return p;
}

/* A default like podman's and Docker's: EPERM for any call not listed. */
static const char *const allowed[] = {
    "read", "write", "openat", "close", "fstat", "mmap", "mprotect", "munmap", "brk",
    "rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "ioctl", "pread64", "pwrite64",
    "madvise", "getpid", "ppoll", "pipe2", "memfd_create", "process_vm_readv",
    "process_vm_writev", "ptrace", "futex", "epoll_wait", "exit_group", "clone", "clone3",
    "nanosleep", "clock_nanosleep", "getrandom", "pidfd_getfd", "restart_syscall",
};

static scmp_filter_ctx default_profile(void)
{
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM));
    ck_assert_ptr_nonnull(ctx);
    for (size_t i = 0; i < sizeof allowed / sizeof allowed[0]; i++) {
        int nr = seccomp_syscall_resolve_name(allowed[i]);
        ck_assert_int_ge(nr, 0);
        ck_assert_int_eq(seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0), 0);
    }
    return ctx;
}

static struct seccomp_outcome run_call(struct prog p, long nr, unsigned known, uint64_t a0,
                                       uint64_t a2)
{
    struct seccomp_call c = {.nr = (int32_t)nr, .arch = NATIVE,
                             .known = SECCOMP_FIELD_NR | SECCOMP_FIELD_ARCH | known};
    c.args[0] = a0;
    c.args[2] = a2;
    struct seccomp_outcome o;
    ck_assert_int_eq(seccomp_bpf_check(p.v, p.n, (char[128]){0}, 128), 0);
    seccomp_bpf_run(p.v, p.n, &c, &o);
    return o;
}

static const char *judge(struct prog *ps, size_t n, char *buf, size_t len)
{
    const struct seccomp_insn *progs[4];
    size_t lens[4];
    for (size_t i = 0; i < n; i++) {
        progs[i] = ps[i].v;
        lens[i] = ps[i].n;
    }
    return sampler_seccomp_judge(4242, 7, progs, lens, n, SAMPLER_PROBE_VM_READV, buf, len,
                                 NULL);
}

/* Everything allowed but nr, which gets action. */
static struct prog one_rule(uint32_t action, int nr)
{
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    ck_assert_ptr_nonnull(ctx);
    ck_assert_int_eq(seccomp_rule_add(ctx, action, nr, 0), 0);
    return export(ctx);
}

/* The sampler is refused under p, saying want; p is freed. */
static void refused_saying(struct prog p, const char *want)
{
    char buf[768];
    const char *r = judge(&p, 1, buf, sizeof buf);
    ck_assert_ptr_nonnull(r);
    ck_assert_msg(strstr(r, want) != NULL, "refusal: %s", r);
    free(p.v);
}

START_TEST(default_profile_lets_the_sampler_in)
{
    struct prog p = export(default_profile());
    struct seccomp_outcome o = run_call(p, SYS_ppoll, 0, 0, 0);
    ck_assert_uint_eq(o.ret, SECCOMP_ACT_ALLOW);
    o = run_call(p, SYS_reboot, 0, 0, 0);
    ck_assert_uint_eq(o.ret, SECCOMP_ACT_ERRNO | EPERM);
    char buf[640];
    ck_assert_ptr_null(judge(&p, 1, buf, sizeof buf));
    free(p.v);
}
END_TEST

/* ppoll failed with EPERM: said with the errno. */
START_TEST(errno_for_ppoll_is_refused)
{
    refused_saying(one_rule(SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ppoll)),
                   "would fail it with errno 1 (EPERM) for ppoll");
}
END_TEST

/* The walk's two ways to check a page: each judged only where it is the
 * one used; rt_sigprocmask with its real arguments (a `how` of 3). */
START_TEST(each_probe_way_is_judged_alone)
{
    const char *name[] = {"process_vm_readv", "rt_sigprocmask"};
    int nr[] = {SCMP_SYS(process_vm_readv), SCMP_SYS(rt_sigprocmask)};
    enum sampler_probe way[] = {SAMPLER_PROBE_VM_READV, SAMPLER_PROBE_SIGMASK};
    for (int denied = 0; denied < 2; denied++) {
        struct prog p = one_rule(SCMP_ACT_ERRNO(EPERM), nr[denied]);
        const struct seccomp_insn *progs[1] = {p.v};
        size_t lens[1] = {p.n};
        for (int w = 0; w < 2; w++) {
            char buf[768];
            struct seccomp_denial d;
            const char *r = sampler_seccomp_judge(4242, 7, progs, lens, 1, way[w], buf,
                                                  sizeof buf, &d);
            if (w != denied) {
                ck_assert_msg(r == NULL, "%s denied, %d judged: %s", name[denied], w, r);
                continue;
            }
            ck_assert_ptr_nonnull(r);
            ck_assert_str_eq(d.name, name[denied]);
            ck_assert_str_eq(d.effect, "would fail it with errno 1 (EPERM)");
        }
        free(p.v);
    }
    /* a filter that looks at `how`: 3 is what the sampler passes */
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    ck_assert_int_eq(seccomp_rule_add(ctx, SCMP_ACT_KILL_PROCESS, SCMP_SYS(rt_sigprocmask), 1,
                                      SCMP_A0(SCMP_CMP_EQ, 3)), 0);
    struct prog p = export(ctx);
    const struct seccomp_insn *progs[1] = {p.v};
    size_t lens[1] = {p.n};
    char buf[768];
    ck_assert_ptr_nonnull(sampler_seccomp_judge(4242, 7, progs, lens, 1, SAMPLER_PROBE_SIGMASK,
                                                buf, sizeof buf, NULL));
    ck_assert_msg(strstr(buf, "would kill the process (SIGSYS) for rt_sigprocmask"), "%s", buf);
    free(p.v);
}
END_TEST

START_TEST(killing_ppoll_is_refused)
{
    struct prog p = one_rule(SCMP_ACT_KILL_PROCESS, SCMP_SYS(ppoll));
    ck_assert_uint_eq(run_call(p, SYS_ppoll, 0, 0, 0).ret, SECCOMP_ACT_KILL_PROCESS);
    ck_assert_uint_eq(run_call(p, SYS_getpid, 0, 0, 0).ret, SECCOMP_ACT_ALLOW);
    refused_saying(p, "process 4242's seccomp filter would kill the process (SIGSYS) for ppoll");
}
END_TEST

/* A filter for another CPU only: this CPU's calls meet the bad-arch action. */
START_TEST(arch_check_kills_foreign_arch)
{
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    ck_assert_int_eq(seccomp_arch_add(ctx, FOREIGN_SCMP), 0);
    ck_assert_int_eq(seccomp_arch_remove(ctx, SCMP_ARCH_NATIVE), 0);
    ck_assert_int_eq(seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_TRAP), 0);
    struct prog p = export(ctx);
    ck_assert_uint_eq(run_call(p, SYS_getpid, 0, 0, 0).ret, SECCOMP_ACT_TRAP);
    refused_saying(p, "would send SIGSYS (trap)");
}
END_TEST

/* Arguments: a known one decides; an unknown one (a pointer) is taken at
 * its worst, and said. */
START_TEST(arguments)
{
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    /* MemoryDenyWriteExecute's rule: mmap writable and executable fails */
    ck_assert_int_eq(seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(mmap), 1,
                                      SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC | PROT_WRITE,
                                              PROT_EXEC | PROT_WRITE)), 0);
    /* process_vm_readv of the process's own pid only */
    ck_assert_int_eq(seccomp_rule_add(ctx, SCMP_ACT_KILL_PROCESS, SCMP_SYS(process_vm_readv), 1,
                                      SCMP_A0(SCMP_CMP_NE, 7)), 0);
    struct prog p = export(ctx);
    struct seccomp_outcome o = run_call(p, SYS_mmap, SECCOMP_FIELD_ARG(2), 0, PROT_READ | PROT_EXEC);
    ck_assert_uint_eq(o.ret, SECCOMP_ACT_ALLOW);
    o = run_call(p, SYS_mmap, SECCOMP_FIELD_ARG(2), 0, PROT_WRITE | PROT_EXEC);
    ck_assert_uint_eq(o.ret, SECCOMP_ACT_ERRNO | EPERM);
    o = run_call(p, SYS_mmap, 0, 0, 0);            /* prot unknown: either */
    ck_assert_uint_eq(o.ret, SECCOMP_ACT_ERRNO | EPERM);
    ck_assert(o.varies);
    ck_assert_uint_eq(o.unknown_read, SECCOMP_FIELD_ARG(2));
    char buf[640];
    ck_assert_ptr_null(judge(&p, 1, buf, sizeof buf));   /* tgid 7, prot 5 */
    free(p.v);

    ctx = seccomp_init(SCMP_ACT_ALLOW);
    ck_assert_int_eq(seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EFAULT), SCMP_SYS(ppoll), 1,
                                      SCMP_A0(SCMP_CMP_GT, 0x10000)), 0);
    p = export(ctx);
    const char *r = judge(&p, 1, buf, sizeof buf);
    ck_assert_ptr_nonnull(r);
    ck_assert_ptr_nonnull(strstr(r, "errno 14 (EFAULT) for ppoll (depending on argument 0, "
                                    "which memprof cannot know in advance"));
    free(p.v);
}
END_TEST

/* Stacked filters: all run, the action of highest precedence wins. */
START_TEST(stacked_filters)
{
    scmp_filter_ctx a = seccomp_init(SCMP_ACT_LOG);
    struct prog p[2];
    p[0] = export(a);
    scmp_filter_ctx b = seccomp_init(SCMP_ACT_ALLOW);
    ck_assert_int_eq(seccomp_rule_add(b, SCMP_ACT_TRACE(5), SCMP_SYS(process_vm_readv), 0), 0);
    p[1] = export(b);
    char buf[640];
    const char *r = judge(p, 2, buf, sizeof buf);
    ck_assert_ptr_nonnull(r);
    ck_assert_ptr_nonnull(strstr(r, "would stop for a tracer"));
    ck_assert_ptr_nonnull(strstr(r, "process_vm_readv"));
    ck_assert(seccomp_ret_wins(SECCOMP_ACT_KILL_PROCESS, SECCOMP_ACT_KILL_THREAD));
    ck_assert(seccomp_ret_wins(SECCOMP_ACT_KILL_THREAD, SECCOMP_ACT_TRAP));
    ck_assert(seccomp_ret_wins(SECCOMP_ACT_TRAP, SECCOMP_ACT_ERRNO | 1));
    ck_assert(seccomp_ret_wins(SECCOMP_ACT_ERRNO, SECCOMP_ACT_USER_NOTIF));
    ck_assert(seccomp_ret_wins(SECCOMP_ACT_USER_NOTIF, SECCOMP_ACT_TRACE));
    ck_assert(seccomp_ret_wins(SECCOMP_ACT_TRACE, SECCOMP_ACT_LOG));
    ck_assert(seccomp_ret_wins(SECCOMP_ACT_LOG, SECCOMP_ACT_ALLOW));
    ck_assert(!seccomp_ret_wins(SECCOMP_ACT_ERRNO | 5, SECCOMP_ACT_ERRNO | 1));
    free(p[0].v);
    free(p[1].v);
}
END_TEST

/* An ERRNO for a call of the stop that puts the sampler in is harmless
 * (it fails only if memprof dies there); a kill is not. */
START_TEST(stop_calls)
{
    struct prog p = one_rule(SCMP_ACT_ERRNO(EPERM), SCMP_SYS(memfd_create));
    char buf[768];
    ck_assert_ptr_null(judge(&p, 1, buf, sizeof buf));
    free(p.v);
    refused_saying(one_rule(SCMP_ACT_KILL_THREAD, SCMP_SYS(pipe2)),
                   "would kill the thread making it (SIGSYS; the process's last thread: the "
                   "process) for pipe2, a system call of the stop");
    refused_saying(one_rule(SCMP_ACT_ERRNO(EPERM), SCMP_SYS(rt_sigreturn)),
                   "for rt_sigreturn, the system call by which a thread memprof holds restores "
                   "itself");
}
END_TEST

/* ---- programs the kernel refuses --------------------------------------- */

#define I(c, t, f, k) {(uint16_t)(c), (uint8_t)(t), (uint8_t)(f), (uint32_t)(k)}

static void refused(const struct seccomp_insn *p, size_t n, const char *why_part)
{
    char why[200] = "";
    ck_assert_int_eq(seccomp_bpf_check(p, n, why, sizeof why), -1);
    ck_assert_msg(strstr(why, why_part), "why: %s", why);
}

START_TEST(malformed_programs)
{
    static struct seccomp_insn big[SECCOMP_BPF_MAXINSNS + 1];
    const struct seccomp_insn ret = I(0x06, 0, 0, SECCOMP_ACT_ALLOW);
    refused(&ret, 0, "0 instructions");
    for (size_t i = 0; i < sizeof big / sizeof big[0]; i++)
        big[i] = ret;
    refused(big, SECCOMP_BPF_MAXINSNS + 1, "4097 instructions");
    char why[200];
    ck_assert_int_eq(seccomp_bpf_check(big, SECCOMP_BPF_MAXINSNS, why, sizeof why), 0);
    const struct seccomp_insn byte_load[] = {I(0x30, 0, 0, 0), ret};    /* LD|B|ABS */
    refused(byte_load, 2, "a load seccomp does not accept");
    const struct seccomp_insn unaligned[] = {I(0x20, 0, 0, 2), ret};
    refused(unaligned, 2, "not of an aligned word");
    const struct seccomp_insn outside[] = {I(0x20, 0, 0, 64), ret};
    refused(outside, 2, "outside struct seccomp_data");
    const struct seccomp_insn far[] = {I(0x15, 0, 5, 0), ret};
    refused(far, 2, "a jump out of the program");
    const struct seccomp_insn ja_far[] = {I(0x05, 0, 0, 1), ret};
    refused(ja_far, 2, "a jump out of the program");
    const struct seccomp_insn no_ret[] = {ret, I(0x20, 0, 0, 0)};
    refused(no_ret, 2, "not a return");
    const struct seccomp_insn unwritten[] = {I(0x60, 0, 0, 3), ret};
    refused(unwritten, 2, "before any write");
    /* written on one path only */
    const struct seccomp_insn one_path[] = {I(0x15, 0, 1, 0), I(0x02, 0, 0, 3),
                                            I(0x60, 0, 0, 3), ret};
    refused(one_path, 4, "before any write");
    const struct seccomp_insn div0[] = {I(0x34, 0, 0, 0), ret};
    refused(div0, 2, "division by the constant 0");
    const struct seccomp_insn ret_x[] = {I(0x0e, 0, 0, 0)};
    refused(ret_x, 1, "a return seccomp does not accept");
    const struct seccomp_insn mem_range[] = {I(0x02, 0, 0, 16), ret};
    refused(mem_range, 2, "scratch word out of range");
    /* written on both paths: accepted, and read back */
    const struct seccomp_insn both[] = {I(0x15, 2, 0, 0), I(0x02, 0, 0, 3), I(0x05, 0, 0, 1),
                                        I(0x02, 0, 0, 3), I(0x60, 0, 0, 3), I(0x16, 0, 0, 0)};
    ck_assert_int_eq(seccomp_bpf_check(both, 6, why, sizeof why), 0);
}
END_TEST

/* Run semantics the kernel has: a division by a zero X returns 0
 * (KILL_THREAD); A, X start at 0; RET A; the length load. */
START_TEST(run_semantics)
{
    const struct seccomp_insn div[] = {I(0x3c, 0, 0, 0), I(0x06, 0, 0, SECCOMP_ACT_ALLOW)};
    struct seccomp_call c = {.nr = 1, .arch = NATIVE, .known = SECCOMP_FIELDS_ALL};
    struct seccomp_outcome o;
    seccomp_bpf_run(div, 2, &c, &o);
    ck_assert_uint_eq(o.ret, SECCOMP_ACT_KILL_THREAD);
    const struct seccomp_insn len[] = {I(0x80, 0, 0, 0), I(0x04, 0, 0, SECCOMP_ACT_ERRNO - 64),
                                       I(0x16, 0, 0, 0)};
    seccomp_bpf_run(len, 3, &c, &o);
    ck_assert_uint_eq(o.ret, SECCOMP_ACT_ERRNO);
    /* the high word of argument 1 */
    c.args[1] = 0x500000000ull;
    const struct seccomp_insn hi[] = {I(0x20, 0, 0, 16 + 8 + 4), I(0x15, 0, 1, 5),
                                      I(0x06, 0, 0, SECCOMP_ACT_LOG), I(0x06, 0, 0, 0)};
    seccomp_bpf_run(hi, 4, &c, &o);
    ck_assert_uint_eq(o.ret, SECCOMP_ACT_LOG);
    c.known &= ~SECCOMP_FIELD_ARG(1);
    seccomp_bpf_run(hi, 4, &c, &o);
    ck_assert_uint_eq(o.ret, SECCOMP_ACT_KILL_THREAD);
    ck_assert(o.varies);
    char buf[160];
    ck_assert_str_eq(seccomp_ret_effect(SECCOMP_ACT_ERRNO | 13, buf, sizeof buf),
                     "would fail it with errno 13 (EACCES)");
    ck_assert_ptr_nonnull(strstr(seccomp_ret_effect(0x00010000, buf, sizeof buf),
                                 "would kill the process"));
}
END_TEST

/* Every system call the sampler's image may make is judged: the list is
 * read from the image's own header (tools/embed_image.py holds the image
 * to it). */
START_TEST(judges_every_image_call)
{
    const char *src = getenv("SRCDIR");
    char path[512];
#if defined(__x86_64__)
    snprintf(path, sizeof path, "%s/allocator/sampler/inproc/arch_x86_64.h", src ? src : ".");
#else
    snprintf(path, sizeof path, "%s/allocator/sampler/inproc/arch_aarch64.h", src ? src : ".");
#endif
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "%s", path);
    char line[256];
    int found = 0;
    while (fgets(line, sizeof line, f)) {
        char name[64];
        long nr;
        if (sscanf(line, "#define ARCH_SYS_%63s %ld", name, &nr) != 2)
            continue;
        found++;
        bool judged = false;
        for (size_t i = 0; i < sampler_seccomp_ncalls(); i++) {
            struct seccomp_call c;
            bool must;
            sampler_seccomp_call(i, 1, &c, &must);
            judged |= c.nr == nr;
        }
        ck_assert_msg(judged, "the image's %s (%ld) is not judged", name, nr);
    }
    fclose(f);
    ck_assert_int_ge(found, 5);     /* ppoll, process_vm_readv, rt_sigprocmask, pipe2, fstat */
}
END_TEST

static Suite *seccomp_suite(void)
{
    Suite *s = suite_create("seccomp");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, default_profile_lets_the_sampler_in);
    tcase_add_test(tc, errno_for_ppoll_is_refused);
    tcase_add_test(tc, killing_ppoll_is_refused);
    tcase_add_test(tc, each_probe_way_is_judged_alone);
    tcase_add_test(tc, arch_check_kills_foreign_arch);
    tcase_add_test(tc, arguments);
    tcase_add_test(tc, stacked_filters);
    tcase_add_test(tc, stop_calls);
    tcase_add_test(tc, malformed_programs);
    tcase_add_test(tc, run_semantics);
    tcase_add_test(tc, judges_every_image_call);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(seccomp_suite)
