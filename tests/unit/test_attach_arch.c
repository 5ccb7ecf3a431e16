/* test_attach_arch.c - the x86-64 frame arithmetic of a remote call: the
 * red zone is skipped, the call stack pointer is 16-byte aligned, scratch
 * space fits between them, the trampoline is `call *%rax; int3`, and the
 * signal mask keeps forced signals deliverable. */
#include <signal.h>
#include <string.h>

#include "attach/arch.h"
#include "attach/remote_call.h"
#include "tests/unit/unit.h"

START_TEST(call_sp_skips_red_zone_and_aligns)
{
    ck_assert_uint_eq(arch_red_zone(), 128);
    for (uint64_t sp = 0x7ffd0000; sp < 0x7ffd0040; sp++)
        for (size_t scratch = 0; scratch < 100; scratch += 7) {
            uint64_t csp = arch_call_sp(sp, scratch);
            ck_assert_uint_eq(csp % 16, 0);
            ck_assert(csp + scratch <= sp - 128);     /* scratch below the red zone */
            ck_assert(sp - 128 - scratch - csp < 16); /* no more than alignment lost */
        }
}
END_TEST

START_TEST(trampoline_is_call_rax_int3)
{
    size_t len, trap;
    const uint8_t *code = arch_trampoline(&len, &trap);
    ck_assert_uint_eq(len, 3);
    ck_assert_uint_eq(trap, 3);
    ck_assert_mem_eq(code, "\xff\xd0\xcc", 3);
}
END_TEST

START_TEST(prepare_call_sets_abi_registers)
{
    struct arch_regs saved, r;
    memset(&saved, 0xab, sizeof saved);
    uint64_t args[5] = { 1, 2, 3, 4, 5 };
    arch_prepare_call(&saved, &r, 0x1000, 0x2000, 0x7ff0, args, 5);
    ck_assert_uint_eq(arch_ip(&r), 0x1000);
    ck_assert_uint_eq(arch_sp(&r), 0x7ff0);
    ck_assert_uint_eq(arch_return_value(&r), 0x2000);  /* rax = function */
}
END_TEST

START_TEST(sigmask_keeps_forced_signals)
{
    uint64_t m = remote_call_sigmask(0);
    int forced[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGSYS };
    for (size_t i = 0; i < 6; i++)
        ck_assert(!(m & (1ULL << (forced[i] - 1))));
    int blocked[] = { SIGINT, SIGTERM, SIGUSR1, SIGALRM, SIGCHLD, SIGRTMIN };
    for (size_t i = 0; i < 6; i++)
        ck_assert(m & (1ULL << (blocked[i] - 1)));
}
END_TEST

static Suite *arch_suite(void)
{
    Suite *s = suite_create("attach_arch");
    TCase *tc = tcase_create("x86_64");
    tcase_add_test(tc, call_sp_skips_red_zone_and_aligns);
    tcase_add_test(tc, trampoline_is_call_rax_int3);
    tcase_add_test(tc, prepare_call_sets_abi_registers);
    tcase_add_test(tc, sigmask_keeps_forced_signals);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(arch_suite)
