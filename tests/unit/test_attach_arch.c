/* test_attach_arch.c - the x86-64 frame arithmetic of a remote call: the
 * red zone is skipped, the call stack pointer is 16-byte aligned, scratch
 * space fits between them, the trampoline ends in rt_sigreturn with no
 * trap, the self-restore frame has the kernel's layout and re-enters an
 * interrupted system call as the kernel would, the signal mask keeps
 * forced signals deliverable, the extended state is written back exactly
 * when (and as far as) it changed, and DWARF register numbers name the
 * right saved registers. */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/user.h>

#include "attach/arch/arch.h"
#include "attach/remote_call.h"
#include "tests/unit/unit.h"

#include <sys/mman.h>

/* Code of memprof's copied into a read+execute page of this process. */
static void *code_page(const uint8_t *code, size_t len)
{
    void *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ck_assert_ptr_ne(page, MAP_FAILED);
    memcpy(page, code, len);
    ck_assert_int_eq(mprotect(page, 4096, PROT_READ | PROT_EXEC), 0);
    return page;
}

/* The capture callback, run here: appends each string without its NUL,
 * stops at the cap and says so, never writes past the buffer. */
START_TEST(capture_callback_appends_up_to_the_cap)
{
    size_t len;
    const uint8_t *code = arch_capture_callback(&len);
    void *page = code_page(code, len);
    void (*cb)(void *, const char *);
    *(void **)&cb = page;
    struct {
        struct arch_capture_head head;
        char data[8];
        char guard[8];
    } buf;
    memset(&buf, 0, sizeof buf);
    memset(buf.guard, 'G', sizeof buf.guard);
    buf.head.cap = sizeof buf.data;
    cb(&buf, "{\"a\":");
    cb(&buf, "");
    ck_assert_uint_eq(buf.head.len, 5);
    ck_assert(!buf.head.truncated);
    ck_assert_int_eq(memcmp(buf.data, "{\"a\":", 5), 0);
    cb(&buf, "12345");
    ck_assert_uint_eq(buf.head.len, 8);
    ck_assert(buf.head.truncated);
    ck_assert_int_eq(memcmp(buf.data, "{\"a\":123", 8), 0);
    ck_assert_int_eq(memcmp(buf.guard, "GGGGGGGG", 8), 0);
    munmap(page, 4096);
}
END_TEST

/* The call runner's callee: records its six arguments and whether the
 * stack was 16-byte aligned at its call, returns a value of them. */
static uint64_t seen[8][6];
static int seen_n, misaligned;

static uint64_t record_call(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e,
                            uint64_t f)
{
    /* Called with rsp 16-aligned, the return address and the saved rbp
     * leave the frame address 16-aligned too. */
    if ((uintptr_t)__builtin_frame_address(0) % 16 != 0)
        misaligned++;
    uint64_t v[6] = {a, b, c, d, e, f};
    memcpy(seen[seen_n++], v, sizeof v);
    return a * 1000 + f;
}

/* The call runner, run here: calls fn once per entry in order with the
 * entry's six arguments, stores each result, keeps the ABI's alignment,
 * and with no entry calls nothing. */
START_TEST(call_runner_calls_each_entry_in_order)
{
    size_t len;
    const uint8_t *code = arch_call_runner(&len);
    void *page = code_page(code, len);
    void (*run)(uint64_t, struct arch_run_entry *, uint64_t);
    *(void **)&run = page;
    struct arch_run_entry v[3];
    memset(v, 0, sizeof v);
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 6; k++)
            v[i].args[k] = (uint64_t)(i + 1) * 10 + (uint64_t)k;
    seen_n = misaligned = 0;
    run((uint64_t)(uintptr_t)record_call, v, 0);
    ck_assert_int_eq(seen_n, 0);
    run((uint64_t)(uintptr_t)record_call, v, 3);
    ck_assert_int_eq(seen_n, 3);
    ck_assert_int_eq(misaligned, 0);
    for (int i = 0; i < 3; i++) {
        ck_assert_mem_eq(seen[i], v[i].args, sizeof v[i].args);
        ck_assert_uint_eq(v[i].ret, v[i].args[0] * 1000 + v[i].args[5]);
    }
    munmap(page, 4096);
}
END_TEST

START_TEST(call_sp_keeps_scratch_below_and_aligns)
{
    ck_assert_uint_eq(arch_red_zone(), 128);
    for (uint64_t below = 0x7ffd0000; below < 0x7ffd0040; below++)
        for (size_t scratch = 0; scratch < 100; scratch += 7) {
            uint64_t csp = arch_call_sp(below, scratch);
            ck_assert_uint_eq(csp % 16, 0);
            ck_assert(csp + scratch <= below);        /* scratch below the frame */
            ck_assert(below - scratch - csp < 16);    /* no more than alignment lost */
        }
}
END_TEST

START_TEST(trampoline_ends_in_rt_sigreturn)
{
    size_t len, stop;
    const uint8_t *code = arch_trampoline(&len, &stop);
    ck_assert_uint_eq(len, 17);
    ck_assert_uint_eq(stop, 15);
    /* call *%rax; mov %rax,%rdi (the whole result: a pointer too);
     * 1: mov %rbx,%rsp; mov $15,%eax; syscall; jmp 1b */
    ck_assert_mem_eq(code, "\xff\xd0\x48\x89\xc7\x48\x89\xdc\xb8\x0f\0\0\0\x0f\x05"
                           "\xeb\xf4", 17);
    ck_assert_ptr_null(memchr(code, 0xcc, len));
}
END_TEST

START_TEST(prepare_call_sets_abi_registers)
{
    struct arch_regs saved, r;
    memset(&saved, 0xab, sizeof saved);
    uint64_t args[5] = { 1, 2, 3, 4, 5 };
    arch_prepare_call(&saved, &r, 0x1000, 0x2000, 0x7ff0, 0x8000, args, 5);
    struct user_regs_struct *u = (struct user_regs_struct *)r.words;
    ck_assert_uint_eq(arch_ip(&r), 0x1000);
    ck_assert_uint_eq(arch_sp(&r), 0x7ff0);
    ck_assert_uint_eq(u->rax, 0x2000);                 /* the function */
    ck_assert_uint_eq(u->rdi, 1);                      /* System V argument order */
    ck_assert_uint_eq(u->rsi, 2);
    ck_assert_uint_eq(u->rdx, 3);
    ck_assert_uint_eq(u->rcx, 4);
    ck_assert_uint_eq(u->r8, 5);
    ck_assert_uint_eq(u->r9, 0xababababababababu);     /* not passed: kept */
    ck_assert_uint_eq(u->rbx, 0x8000);                 /* the frame, callee-saved */
    ck_assert_uint_eq(u->orig_rax, (unsigned long long)-1);
}
END_TEST

/* A thread state as ptrace gives it: regs and a 2432-byte XSAVE area whose
 * sw_reserved bytes hold XCR0 (x87|SSE|AVX). */
static void fake_state(struct arch_state *st, uint64_t rip, uint64_t rax, uint64_t orig)
{
    memset(st, 0, sizeof *st);
    struct user_regs_struct *u = (struct user_regs_struct *)st->regs.words;
    u->rsp = 0x7ffd1000;
    u->rip = rip;
    u->rax = rax;
    u->orig_rax = orig;
    u->rbx = 0x1111;
    u->r15 = 0x1515;
    u->cs = 0x33;
    u->ss = 0x2b;
    u->eflags = 0x246;
    st->xstate_len = 2432;
    st->xstate = calloc(1, st->xstate_len);
    uint64_t xcr0 = 7;
    memcpy((uint8_t *)st->xstate + 464, &xcr0, sizeof xcr0);
    memset((uint8_t *)st->xstate + 576, 0x5a, 256);     /* AVX upper halves */
}

/* The ucontext fields rt_sigreturn reads, by the kernel's offsets. */
static uint64_t uc_word(const struct arch_frame *f, size_t off)
{
    uint64_t v;
    memcpy(&v, f->img + off, sizeof v);
    return v;
}
#define UC_MC 40
#define MC(i) (UC_MC + 8 * (i))     /* r8..r15 di si bp bx dx ax cx sp ip flags */

START_TEST(frame_has_kernel_layout)
{
    struct arch_state st;
    fake_state(&st, 0x401000, 5, (uint64_t)-1);
    struct arch_frame f;
    struct mp_error err;
    ck_assert_int_eq(arch_frame_build(&st, 0x1234, ~0ull, -1, 0x400000, &f, &err), 0);
    ck_assert_uint_eq(f.sigreturn_sp % 16, 0);
    ck_assert_uint_eq(f.base, f.sigreturn_sp);
    ck_assert(f.base + f.len <= 0x7ffd1000 - 128);       /* below the red zone */
    ck_assert(f.low + 8 <= f.sigreturn_sp);              /* pretcode slot reserved */
    ck_assert_uint_eq(uc_word(&f, 0), 7);                /* FP_XSTATE|SS|STRICT_SS */
    ck_assert_uint_eq(uc_word(&f, 296), 0x1234);         /* uc_sigmask: the original */
    ck_assert_uint_eq((uint32_t)uc_word(&f, 24), 3);     /* altstack left alone */
    ck_assert_uint_eq(uc_word(&f, MC(11)), 0x1111);      /* rbx */
    ck_assert_uint_eq(uc_word(&f, MC(7)), 0x1515);       /* r15 */
    ck_assert_uint_eq(uc_word(&f, MC(15)), 0x7ffd1000);  /* rsp */
    ck_assert_uint_eq(uc_word(&f, MC(16)), 0x401000);    /* rip */
    ck_assert_uint_eq(uc_word(&f, MC(13)), 5);           /* rax */
    uint64_t segs = uc_word(&f, MC(18));
    ck_assert_uint_eq(segs & 0xffff, 0x33);              /* cs */
    ck_assert_uint_eq(segs >> 48, 0x2b);                 /* ss */
    uint64_t fp = uc_word(&f, MC(23));
    ck_assert_uint_eq(fp % 64, 0);
    ck_assert(fp >= f.sigreturn_sp + 304 + 128);         /* after ucontext + siginfo */
    const uint8_t *x = f.img + (fp - f.base);
    uint32_t magic1, xsize, magic2;
    memcpy(&magic1, x + 464, 4);
    memcpy(&xsize, x + 480, 4);
    ck_assert_uint_eq(magic1, 0x46505853);
    ck_assert_uint_eq(xsize, 832);                       /* through the AVX component */
    memcpy(&magic2, x + xsize, 4);
    ck_assert_uint_eq(magic2, 0x46505845);
    ck_assert_uint_eq(x[600], 0x5a);
    ck_assert(fp + xsize + 4 <= f.base + f.len);
    arch_frame_free(&f);
    arch_state_free(&st);
}
END_TEST

START_TEST(frame_refuses_a_short_fpu_state)
{
    struct arch_state st;
    fake_state(&st, 0x401000, 5, (uint64_t)-1);
    st.xstate_len = 512;            /* legacy area only: no XSAVE header */
    struct arch_frame f;
    struct mp_error err;
    ck_assert_int_eq(arch_frame_build(&st, 0, ~0ull, -1, 0x400000, &f, &err), -1);
    ck_assert_str_eq(err.msg, "the FPU state of 512 bytes does not fit a signal frame");
    arch_state_free(&st);
}
END_TEST

/* rax and rip the frame resumes with, for a thread stopped with these. */
static void frame_resume_as(uint64_t rax, uint64_t orig, long reissue, uint64_t *rax_out,
                            uint64_t *rip_out)
{
    struct arch_state st;
    fake_state(&st, 0x401002, rax, orig);
    struct arch_frame f;
    struct mp_error err;
    ck_assert_int_eq(arch_frame_build(&st, 0, ~0ull, reissue, 0x400000, &f, &err), 0);
    *rax_out = uc_word(&f, MC(13));
    *rip_out = uc_word(&f, MC(16));
    arch_frame_free(&f);
    arch_state_free(&st);
}

static void frame_resume(uint64_t rax, uint64_t orig, uint64_t *rax_out, uint64_t *rip_out)
{
    frame_resume_as(rax, orig, -1, rax_out, rip_out);
}

START_TEST(frame_restarts_interrupted_syscalls)
{
    uint64_t rax, rip;
    for (int e = 512; e <= 514; e++) {           /* ERESTARTSYS/NOINTR/NOHAND */
        frame_resume((uint64_t)-e, SYS_read, &rax, &rip);
        ck_assert_uint_eq(rax, SYS_read);
        ck_assert_uint_eq(rip, 0x401000);
    }
    /* ERESTART_RESTARTBLOCK: re-issued, since rt_sigreturn voids the
     * restart block; unknown original (restart_syscall): EINTR. */
    frame_resume((uint64_t)-516, SYS_clock_nanosleep, &rax, &rip);
    ck_assert_uint_eq(rax, SYS_clock_nanosleep);
    ck_assert_uint_eq(rip, 0x401000);
    frame_resume((uint64_t)-516, SYS_restart_syscall, &rax, &rip);
    ck_assert_uint_eq(rax, (uint64_t)-EINTR);
    ck_assert_uint_eq(rip, 0x401002);
    /* ...unless an earlier stop saw the original: re-issued as that. */
    frame_resume_as((uint64_t)-516, SYS_restart_syscall, SYS_nanosleep, &rax, &rip);
    ck_assert_uint_eq(rax, SYS_nanosleep);
    ck_assert_uint_eq(rip, 0x401000);
    frame_resume_as((uint64_t)-516, SYS_clock_nanosleep, SYS_nanosleep, &rax, &rip);
    ck_assert_uint_eq(rax, SYS_clock_nanosleep);   /* the registers' own wins */
    frame_resume(7, SYS_read, &rax, &rip);       /* completed: untouched */
    ck_assert_uint_eq(rax, 7);
    ck_assert_uint_eq(rip, 0x401002);
    struct arch_state st;
    fake_state(&st, 0x401002, (uint64_t)-512, SYS_read);
    ck_assert_uint_eq(arch_restart_pc(&st.regs), 0x401000);
    arch_state_free(&st);
    fake_state(&st, 0x401002, (uint64_t)-512, (uint64_t)-1);
    ck_assert_uint_eq(arch_restart_pc(&st.regs), 0);
    arch_state_free(&st);
    ck_assert(arch_is_syscall_insn((const uint8_t *)"\x0f\x05"));
    ck_assert(!arch_is_syscall_insn((const uint8_t *)"\x90\x90"));
}
END_TEST

/* rax the frame resumes with for a thread stopped in `orig` returning
 * -err, with rsi and r10 as given (re-issued: rip back on the syscall). */
static uint64_t frame_rax_with_args(long err, uint64_t orig, uint64_t rsi, uint64_t r10)
{
    struct arch_state st;
    fake_state(&st, 0x401002, (uint64_t)-err, orig);
    struct user_regs_struct *u = (struct user_regs_struct *)st.regs.words;
    u->rsi = rsi;
    u->r10 = r10;
    struct arch_frame f;
    struct mp_error err_out;
    ck_assert_int_eq(arch_frame_build(&st, 0, ~0ull, -1, 0x400000, &f, &err_out), 0);
    uint64_t rax = uc_word(&f, MC(13)), rip = uc_word(&f, MC(16));
    ck_assert_uint_eq(rip, rax == (uint64_t)-EINTR ? 0x401002 : 0x401000);
    arch_frame_free(&f);
    arch_state_free(&st);
    return rax;
}

/* What the self-restore frame cannot resume exactly errs towards EINTR
 * wherever the program can go on from there with what was left. */
START_TEST(frame_prefers_eintr_to_a_longer_sleep)
{
    uint64_t eintr = (uint64_t)-EINTR;
    /* select family: the time left is in their timeout: EINTR */
    ck_assert_uint_eq(frame_rax_with_args(514, SYS_select, 0, 0), eintr);
    ck_assert_uint_eq(frame_rax_with_args(514, SYS_pselect6, 0, 0), eintr);
    ck_assert_uint_eq(frame_rax_with_args(514, SYS_ppoll, 0, 0), eintr);
    /* an absolute clock_nanosleep: restarted (pause, sigsuspend: see
     * frame_sleeps_until_a_handler_ran) */
    ck_assert_uint_eq(frame_rax_with_args(514, SYS_clock_nanosleep, 1, 0), SYS_clock_nanosleep);
    /* relative sleeps: EINTR when `rem` holds the time left, else re-issued */
    ck_assert_uint_eq(frame_rax_with_args(516, SYS_nanosleep, 0x7ffd0000, 0), eintr);
    ck_assert_uint_eq(frame_rax_with_args(516, SYS_nanosleep, 0, 0), SYS_nanosleep);
    ck_assert_uint_eq(frame_rax_with_args(516, SYS_clock_nanosleep, 0, 0x7ffd0000), eintr);
    ck_assert_uint_eq(frame_rax_with_args(516, SYS_clock_nanosleep, 0, 0), SYS_clock_nanosleep);
    /* poll and FUTEX_WAIT would start their relative timeout over: EINTR;
     * FUTEX_WAIT_BITSET's deadline is absolute: re-issued */
    ck_assert_uint_eq(frame_rax_with_args(516, SYS_poll, 0, 0), eintr);
    ck_assert_uint_eq(frame_rax_with_args(516, SYS_futex, 128 | 0, 0), eintr);
    ck_assert_uint_eq(frame_rax_with_args(516, SYS_futex, 128 | 9, 0), SYS_futex);
    /* interrupted read, wait4: restarted as before */
    ck_assert_uint_eq(frame_rax_with_args(512, SYS_read, 0, 0), SYS_read);
    ck_assert_uint_eq(frame_rax_with_args(512, SYS_wait4, 0, 0), SYS_wait4);
}
END_TEST

/* A thread in pause() or rt_sigsuspend() restores itself through a sleep
 * frame first: rt_sigsuspend at the trampoline's system call under the
 * hold mask, with the mask it waited with; then the outer frame (the
 * sleep frame's %rbx and %rsp) gives it EINTR with its own mask. */
static void check_sleep_frame(uint64_t orig, uint64_t wait_mask_at, uint64_t wait_size)
{
    struct arch_state st;
    fake_state(&st, 0x401002, (uint64_t)-514, orig);
    struct user_regs_struct *u = (struct user_regs_struct *)st.regs.words;
    u->rdi = 0x7ffd2000;
    u->rsi = 8;
    struct arch_frame f;
    struct mp_error err;
    ck_assert_int_eq(arch_frame_build(&st, 0x1234, 0xfff0, -1, 0x400000, &f, &err), 0);
    uint64_t outer = uc_word(&f, MC(11));
    ck_assert_uint_eq(uc_word(&f, MC(15)), outer);           /* rsp: above it */
    ck_assert_uint_eq(outer % 16, 0);
    ck_assert(f.base + 304 + 128 <= outer - 8);             /* no overlap */
    ck_assert_uint_eq(f.sigreturn_sp, f.base);
    ck_assert(f.base + f.len <= 0x7ffd1000 - 128);
    ck_assert_uint_eq(uc_word(&f, 0), 6);                    /* no FPU state */
    ck_assert_uint_eq(uc_word(&f, MC(23)), 0);
    ck_assert_uint_eq(uc_word(&f, 296), 0xfff0);             /* the hold mask */
    ck_assert_uint_eq(uc_word(&f, MC(16)), 0x400000 + 13);   /* the syscall */
    ck_assert_uint_eq(uc_word(&f, MC(13)), SYS_rt_sigsuspend);
    ck_assert_uint_eq(uc_word(&f, MC(8)), wait_mask_at ? wait_mask_at : outer + 296);
    ck_assert_uint_eq(uc_word(&f, MC(9)), wait_size);
    size_t o = outer - f.base;
    ck_assert_uint_eq(uc_word(&f, o + 296), 0x1234);         /* its own mask */
    ck_assert_uint_eq(uc_word(&f, o + MC(13)), (uint64_t)-EINTR);
    ck_assert_uint_eq(uc_word(&f, o + MC(16)), 0x401002);
    ck_assert_uint_eq(uc_word(&f, o + MC(15)), 0x7ffd1000);
    ck_assert_uint_eq(uc_word(&f, o + MC(11)), 0x1111);
    ck_assert_uint_ne(uc_word(&f, o + MC(23)), 0);           /* its FPU state */
    arch_frame_free(&f);
    arch_state_free(&st);
}

START_TEST(frame_sleeps_until_a_handler_ran)
{
    check_sleep_frame(SYS_pause, 0, 8);                  /* the outer uc_sigmask */
    check_sleep_frame(SYS_rt_sigsuspend, 0x7ffd2000, 8); /* its own argument */
    /* pause adds a system call of its own (a seccomp filter may forbid it);
     * sigsuspend waits with its own call. */
    struct arch_state st;
    fake_state(&st, 0x401002, (uint64_t)-514, SYS_pause);
    ck_assert(arch_frame_adds_syscall(&st.regs));
    /* Without a trampoline (tramp 0: a filtered thread) it is re-issued. */
    struct arch_frame f;
    struct mp_error err;
    ck_assert_int_eq(arch_frame_build(&st, 0, ~0ull, -1, 0, &f, &err), 0);
    ck_assert_uint_eq(uc_word(&f, MC(13)), SYS_pause);
    ck_assert_uint_eq(uc_word(&f, MC(16)), 0x401000);
    arch_frame_free(&f);
    arch_state_free(&st);
    fake_state(&st, 0x401002, (uint64_t)-514, SYS_rt_sigsuspend);
    ck_assert(!arch_frame_adds_syscall(&st.regs));
    arch_state_free(&st);
    /* Completed, or not waiting for a handler: one frame as before. */
    uint64_t rax, rip;
    frame_resume((uint64_t)-4, SYS_pause, &rax, &rip);
    ck_assert_uint_eq(rax, (uint64_t)-4);
    ck_assert_uint_eq(rip, 0x401002);
    frame_resume((uint64_t)-514, SYS_read, &rax, &rip);
    ck_assert_uint_eq(rax, SYS_read);
}
END_TEST

/* Registers of a thread stopped in a restart-block call `orig` issued at
 * 0x401000 with first argument arg0. */
static struct arch_regs restart_block_regs(uint64_t orig, uint64_t arg0)
{
    /* Filled as its own object and copied in: writing through a cast
     * pointer and returning the struct by value is an aliasing violation
     * the optimizer is free to break. */
    struct user_regs_struct u;
    memset(&u, 0, sizeof u);
    u.rip = 0x401002;
    u.rax = (uint64_t)-516;
    u.orig_rax = orig;
    u.rdi = arg0;
    u.rsi = 0x7ffd0000;
    struct arch_regs r;
    memset(&r, 0, sizeof r);
    memcpy(r.words, &u, sizeof u);
    return r;
}

START_TEST(restart_block_number_remembered_per_thread)
{
    struct remote_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    struct arch_regs sleeping = restart_block_regs(SYS_clock_nanosleep, 1);
    struct arch_regs continued = restart_block_regs(SYS_restart_syscall, 1);
    struct arch_regs other_args = restart_block_regs(SYS_restart_syscall, 2);
    struct arch_syscall call;
    ck_assert_int_eq(arch_restart_block(&sleeping, &call), RESTART_BLOCK_CALL);
    ck_assert_uint_eq(call.pc, 0x401000);
    ck_assert_int_eq(call.nr, SYS_clock_nanosleep);
    ck_assert_int_eq(arch_restart_block(&continued, &call), RESTART_BLOCK_CONTINUED);
    ck_assert_int_eq(call.nr, -1);
    /* Never seen: unknown.  Seen on thread 7: known on 7 only, and only
     * for the same call (instruction and arguments). */
    ck_assert_int_eq(remote_reissue_nr(&ctx, 7, &continued), -1);
    ck_assert_int_eq(remote_reissue_nr(&ctx, 7, &sleeping), SYS_clock_nanosleep);
    ck_assert_int_eq(remote_reissue_nr(&ctx, 7, &continued), SYS_clock_nanosleep);
    ck_assert_int_eq(remote_reissue_nr(&ctx, 8, &continued), -1);
    ck_assert_int_eq(remote_reissue_nr(&ctx, 7, &other_args), -1);
    /* A thread's newer call replaces its older one. */
    struct arch_regs polling = restart_block_regs(SYS_poll, 1);
    ck_assert_int_eq(remote_reissue_nr(&ctx, 7, &polling), SYS_poll);
    ck_assert_int_eq(remote_reissue_nr(&ctx, 7, &continued), SYS_poll);
    /* Not a restart-block call at all. */
    struct arch_regs reading = restart_block_regs(SYS_read, 1);
    struct user_regs_struct *u = (struct user_regs_struct *)reading.words;
    u->rax = (uint64_t)-512;
    ck_assert_int_eq(arch_restart_block(&reading, &call), RESTART_BLOCK_NONE);
    ck_assert_int_eq(remote_reissue_nr(&ctx, 7, &reading), -1);
}
END_TEST

/* A select/pselect6/ppoll stopped with -ERESTARTNOHAND restarts with the
 * timeout it wrote back: where it is, and of which kind. */
START_TEST(restart_timeout_found_for_select_family)
{
    struct arch_regs r = restart_block_regs(SYS_pselect6, 0);
    struct user_regs_struct *u = (struct user_regs_struct *)r.words;
    u->rax = (uint64_t)-514;
    u->r8 = 0x7ffd1000;
    u->rdx = 0x7ffd2000;
    uint64_t addr = 0;
    ck_assert_int_eq(arch_restart_timeout(&r, &addr), RESTART_TIMEOUT_TIMESPEC);
    ck_assert_uint_eq(addr, 0x7ffd1000);
    u->orig_rax = SYS_select;
    ck_assert_int_eq(arch_restart_timeout(&r, &addr), RESTART_TIMEOUT_TIMEVAL);
    ck_assert_uint_eq(addr, 0x7ffd1000);
    u->orig_rax = SYS_ppoll;
    ck_assert_int_eq(arch_restart_timeout(&r, &addr), RESTART_TIMEOUT_TIMESPEC);
    ck_assert_uint_eq(addr, 0x7ffd2000);
    u->rdx = 0;                              /* no timeout: nothing to adjust */
    ck_assert_int_eq(arch_restart_timeout(&r, &addr), RESTART_TIMEOUT_NONE);
    u->orig_rax = SYS_pselect6;
    u->rax = (uint64_t)-EINTR;               /* not restarted */
    ck_assert_int_eq(arch_restart_timeout(&r, &addr), RESTART_TIMEOUT_NONE);
    u->rax = (uint64_t)-514;
    u->orig_rax = SYS_poll;                  /* restart block: kernel-exact */
    ck_assert_int_eq(arch_restart_timeout(&r, &addr), RESTART_TIMEOUT_NONE);
    u->orig_rax = (uint64_t)-1;
    ck_assert_int_eq(arch_restart_timeout(&r, &addr), RESTART_TIMEOUT_NONE);
}
END_TEST

START_TEST(held_time_comes_off_the_timeout)
{
    int64_t sec = 0, sub = 400000;           /* 400 ms left, as a timeval */
    ck_assert(remote_timeout_less(&sec, &sub, 1000000, 150000000));
    ck_assert_int_eq(sec, 0);
    ck_assert_int_eq(sub, 250000);
    sec = 2, sub = 100000000;                /* 2.1 s left, as a timespec */
    ck_assert(remote_timeout_less(&sec, &sub, 1000000000, 300000000));
    ck_assert_int_eq(sec, 1);
    ck_assert_int_eq(sub, 800000000);
    sec = 0, sub = 1000;                     /* held past the deadline: 0 */
    ck_assert(remote_timeout_less(&sec, &sub, 1000000, 5000000000));
    ck_assert_int_eq(sec, 0);
    ck_assert_int_eq(sub, 0);
    sec = 1, sub = 0;                        /* under a microsecond: untouched */
    ck_assert(remote_timeout_less(&sec, &sub, 1000000, 999));
    ck_assert_int_eq(sec, 1);
    ck_assert_int_eq(sub, 0);
    sec = 0, sub = 1000000;                  /* not a timeval: left alone */
    ck_assert(!remote_timeout_less(&sec, &sub, 1000000, 1000));
    ck_assert_int_eq(sub, 1000000);
    sec = -1, sub = 0;
    ck_assert(!remote_timeout_less(&sec, &sub, 1000000000, 1000));
}
END_TEST

START_TEST(sigreturn_entry_and_resigreturn)
{
    struct arch_regs r;
    memset(&r, 0, sizeof r);
    struct user_regs_struct *u = (struct user_regs_struct *)r.words;
    u->orig_rax = SYS_rt_sigreturn;
    u->rip = 0x100e;
    u->rax = (unsigned long long)-ENOSYS;
    u->rdi = 42;
    ck_assert(arch_at_sigreturn_entry(&r, 0x100e));
    ck_assert(!arch_at_sigreturn_entry(&r, 0x1000));
    ck_assert_uint_eq(arch_call_result(&r), 42);
    struct arch_regs out;
    arch_prepare_resigreturn(&r, &out);
    const struct user_regs_struct *o = (const struct user_regs_struct *)out.words;
    ck_assert_uint_eq(o->orig_rax, (unsigned long long)-1);  /* skipped now */
    ck_assert_uint_eq(o->rax, SYS_rt_sigreturn);             /* entered again */
    ck_assert_uint_eq(o->rip, 0x100c);
    ck_assert(!arch_at_sigreturn_entry(&out, 0x100e));       /* the exit stop */
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
    /* one the thread blocks itself stays blocked: a kill()-sent one is
     * then taken by a thread that lets it in, not kept by memprof */
    uint64_t own = (1ULL << (SIGSEGV - 1)) | (1ULL << (SIGUSR1 - 1));
    m = remote_call_sigmask(own);
    ck_assert(m & (1ULL << (SIGSEGV - 1)));
    ck_assert(!(m & (1ULL << (SIGBUS - 1))));
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
    tcase_add_test(tc, call_sp_keeps_scratch_below_and_aligns);
    tcase_add_test(tc, capture_callback_appends_up_to_the_cap);
    tcase_add_test(tc, call_runner_calls_each_entry_in_order);
    tcase_add_test(tc, trampoline_ends_in_rt_sigreturn);
    tcase_add_test(tc, prepare_call_sets_abi_registers);
    tcase_add_test(tc, frame_has_kernel_layout);
    tcase_add_test(tc, frame_refuses_a_short_fpu_state);
    tcase_add_test(tc, frame_restarts_interrupted_syscalls);
    tcase_add_test(tc, frame_prefers_eintr_to_a_longer_sleep);
    tcase_add_test(tc, frame_sleeps_until_a_handler_ran);
    tcase_add_test(tc, restart_block_number_remembered_per_thread);
    tcase_add_test(tc, restart_timeout_found_for_select_family);
    tcase_add_test(tc, held_time_comes_off_the_timeout);
    tcase_add_test(tc, sigreturn_entry_and_resigreturn);
    tcase_add_test(tc, sigmask_keeps_forced_signals);
    tcase_add_test(tc, xstate_restore_kind_by_changed_area);
    tcase_add_test(tc, dwarf_registers_follow_the_abi);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(arch_suite)
