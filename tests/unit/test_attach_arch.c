/* test_attach_arch.c - the x86-64 frame arithmetic of a remote call: the
 * red zone is skipped, the call stack pointer is 16-byte aligned, scratch
 * space fits between them, the trampoline is `call *%rax; int3`, the
 * signal mask keeps forced signals deliverable, the extended state is
 * written back exactly when (and as far as) it changed, and DWARF register
 * numbers name the right saved registers. */
#include <signal.h>
#include <stdint.h>
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

START_TEST(xstate_restore_kind_by_changed_area)
{
    uint8_t saved[1024], now[1024];
    for (size_t i = 0; i < sizeof saved; i++)
        saved[i] = (uint8_t)i;
    memcpy(now, saved, sizeof now);
    ck_assert_int_eq(arch_xstate_restore_kind(saved, now, sizeof now), XSTATE_UNCHANGED);
    now[160] ^= 1;                       /* xmm in the legacy area */
    ck_assert_int_eq(arch_xstate_restore_kind(saved, now, sizeof now), XSTATE_LEGACY_ONLY);
    now[520] ^= 1;                       /* header: in-use bits only */
    ck_assert_int_eq(arch_xstate_restore_kind(saved, now, sizeof now), XSTATE_LEGACY_ONLY);
    now[576] ^= 1;                       /* first byte of the AVX upper halves */
    ck_assert_int_eq(arch_xstate_restore_kind(saved, now, sizeof now), XSTATE_FULL);
    memcpy(now, saved, sizeof now);
    now[1023] ^= 1;                      /* last byte of the extended area */
    ck_assert_int_eq(arch_xstate_restore_kind(saved, now, sizeof now), XSTATE_FULL);
}
END_TEST

START_TEST(dwarf_registers_follow_the_abi)
{
    struct arch_regs r;
    arch_regs_from_pc_sp(&r, 0x401000, 0x7ffc0000);
    uint64_t v = 1;
    ck_assert_int_eq(arch_dwarf_reg(&r, 7, &v), 0);    /* rsp */
    ck_assert_uint_eq(v, 0x7ffc0000);
    ck_assert_int_eq(arch_dwarf_reg(&r, 16, &v), 0);   /* return address = rip */
    ck_assert_uint_eq(v, 0x401000);
    ck_assert_int_eq(arch_dwarf_reg(&r, 6, &v), 0);    /* rbp: unknown, 0 */
    ck_assert_uint_eq(v, 0);
    ck_assert_int_eq(arch_dwarf_reg(&r, 17, &v), -1);  /* xmm0: not ours */
    ck_assert_int_eq(arch_dwarf_reg(&r, -1, &v), -1);
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
    tcase_add_test(tc, xstate_restore_kind_by_changed_area);
    tcase_add_test(tc, dwarf_registers_follow_the_abi);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(arch_suite)
