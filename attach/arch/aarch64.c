/* aarch64.c - the arm64 side of a remote call: user_pt_regs through
 * NT_PRSTATUS, the system call number through NT_ARM_SYSTEM_CALL (arm64
 * has no orig_rax), the FP/SIMD state (NT_PRFPREG) and, on a CPU with
 * SVE, the scalable vector state (NT_ARM_SVE), the `blr x9; ...;
 * rt_sigreturn` trampoline that the call returns to through x30, 16-byte
 * stack alignment and no red zone (AAPCS64 has none: the kernel itself
 * puts signal frames right below sp), BTI, and the rt_sigframe
 * (arch/arm64/kernel/signal.c) a thread restores itself from when memprof
 * dies mid-call.
 *
 * Syscall restart differs from x86-64 (arch/arm64/kernel/signal.c,
 * do_signal): the kernel makes the restart decision *before* the ptrace
 * stop a tracer sees.  At memprof's interrupt stop a thread interrupted in
 * a restartable call already has pc rewound onto its `svc #0`, x0 put back
 * from orig_x0 and its syscall number forgotten (-1); the -ERESTART* code
 * is in no register.  So an exact restore of the registers re-issues the
 * call by its number in x8 when the thread resumes, with its original
 * arguments.  That is the kernel's own restart for every -ERESTARTSYS,
 * -ERESTARTNOINTR and -ERESTARTNOHAND call.  A call the kernel continues
 * through restart_syscall instead (-ERESTART_RESTARTBLOCK: relative
 * nanosleep and clock_nanosleep, timed futex waits) would wait its whole
 * timeout again: for those the engine reads the decision at the `svc`'s
 * entry stop (arch_restart_hidden, arch_restart_seen) and the thread
 * resumes with restart_syscall in x8.  ppoll/pselect6 have the time
 * memprof held the thread taken off the timeout the kernel wrote back
 * (arch_restart_timeout).  What still differs is said in docs/guide.md
 * (the safety list, "On arm64").
 *
 * FPCR and FPSR are left as the thread had them during the call: AAPCS64
 * makes FPCR's modes callee-saved, so jemalloc runs under whatever modes
 * the program may call it with. */
#include "attach/arch/arch.h"

#include <elf.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#ifndef NT_ARM_SYSTEM_CALL
#define NT_ARM_SYSTEM_CALL 0x404
#endif
#ifndef NT_ARM_SVE
#define NT_ARM_SVE 0x405
#endif

/* The words of struct arch_regs: user_pt_regs (x0..x30, sp, pc, pstate),
 * then what memprof keeps beside it. */
enum {
    W_X0 = 0, W_X7 = 7, W_X8 = 8, W_X9 = 9, W_X19 = 19, W_X30 = 30,
    W_SP = 31, W_PC = 32, W_PSTATE = 33,
    PRSTATUS_WORDS = 34,
    W_SYSCALLNO = 34,   /* NT_ARM_SYSTEM_CALL: -1 when in no system call */
    W_FLAGS = 35,       /* FLAG_AT_SVC */
};
_Static_assert(W_FLAGS < sizeof(struct arch_regs) / 8, "arch_regs too small");

/* pc stands on an `svc #0` (read by arch_save): where a thread interrupted
 * in a restartable system call stands (the kernel rewound it there). */
#define FLAG_AT_SVC 1ull

#define SVC0 0xd4000001u
#define PSR_SS (1ull << 21)             /* software step */
#define PSR_BTYPE (3ull << 10)          /* BTI branch type of the last branch */
#define PTRACE_SYSCALL_ENTER 0          /* x7 at a syscall-entry stop */

/* struct user_fpsimd_state: v0..v31, fpsr, fpcr. */
#define FPSIMD_LEN 528
/* Large enough for NT_ARM_SVE at the architecture's largest vector length
 * (2048 bits: 32 Z of 256 bytes, 16 P and FFR of 32 bytes, header). */
#define SVE_MAX (16 + 34 * 256 + 16 * 32 + 32 + 64)
#define SVE_PT_REGS_SVE 1u              /* user_sve_header.flags: SVE live */

static uint64_t *w(struct arch_regs *r)
{
    return r->words;
}

static const uint64_t *cw(const struct arch_regs *r)
{
    return r->words;
}

size_t arch_red_zone(void)
{
    return 0;
}

uint64_t arch_call_sp(uint64_t below, size_t scratch)
{
    /* sp must be 16-byte aligned whenever it is used for a memory access
     * (SCTLR_EL1.SA0): the kernel's signal frames keep it so too. */
    return (below - scratch) & ~(uint64_t)15;
}

/* The code below is little-endian arm64, one instruction a word, as
 * aarch64-linux-gnu-as -march=armv8.5-a assembled the source beside it
 * (checked with objdump -d).  `bti c` is a hint (a no-op without BTI):
 * the callback and the runner are called through blr, and the pages
 * memprof maps for them are not PROT_BTI, but a landing pad costs
 * nothing and keeps them valid targets should they ever be. */

const uint8_t *arch_capture_callback(size_t *len)
{
    /* x0: the head (len at 0, cap at 8, truncated at 16, data at 24),
     * x1: the string. */
    static const uint32_t code[] = {
        0xd503245f,     /*     bti c                  */
        0xf9400002,     /*     ldr x2, [x0]           */
        0xf9400403,     /*     ldr x3, [x0, #8]       */
        0x38401424,     /* 1:  ldrb w4, [x1], #1      */
        0x34000124,     /*     cbz w4, 3f             */
        0xeb03005f,     /*     cmp x2, x3             */
        0x540000a2,     /*     b.hs 2f                */
        0x8b020005,     /*     add x5, x0, x2         */
        0x390060a4,     /*     strb w4, [x5, #24]     */
        0x91000442,     /*     add x2, x2, #1         */
        0x17fffff9,     /*     b 1b                   */
        0xd2800024,     /* 2:  mov x4, #1             */
        0xf9000804,     /*     str x4, [x0, #16]      */
        0xf9000002,     /* 3:  str x2, [x0]           */
        0xd65f03c0,     /*     ret                    */
    };
    _Static_assert(sizeof(struct arch_capture_head) == 24, "the code's offsets");
    *len = sizeof code;
    return (const uint8_t *)code;
}

const uint8_t *arch_call_runner(size_t *len)
{
    /* x0: fn, x1: the entries, x2: how many.  A 48-byte frame keeps sp
     * 16-byte aligned and holds x29/x30 (a frame record: unwinders walk
     * through it) and the callee-saved x19..x21 it uses. */
    static const uint32_t code[] = {
        0xd503245f,     /*     bti c                       */
        0xa9bd7bfd,     /*     stp x29, x30, [sp, #-48]!   */
        0x910003fd,     /*     mov x29, sp                 */
        0xa90153f3,     /*     stp x19, x20, [sp, #16]     */
        0xf90013f5,     /*     str x21, [sp, #32]          */
        0xaa0003f3,     /*     mov x19, x0                 */
        0xaa0103f4,     /*     mov x20, x1                 */
        0xaa0203f5,     /*     mov x21, x2                 */
        0xb4000135,     /* 1:  cbz x21, 2f                 */
        0xa9400680,     /*     ldp x0, x1, [x20]           */
        0xa9410e82,     /*     ldp x2, x3, [x20, #16]      */
        0xa9421684,     /*     ldp x4, x5, [x20, #32]      */
        0xd63f0260,     /*     blr x19                     */
        0xf9001a80,     /*     str x0, [x20, #48]          */
        0x9100e294,     /*     add x20, x20, #56           */
        0xd10006b5,     /*     sub x21, x21, #1            */
        0x17fffff8,     /*     b 1b                        */
        0xa94153f3,     /* 2:  ldp x19, x20, [sp, #16]     */
        0xf94013f5,     /*     ldr x21, [sp, #32]          */
        0xa8c37bfd,     /*     ldp x29, x30, [sp], #48     */
        0xd65f03c0,     /*     ret                         */
    };
    _Static_assert(sizeof(struct arch_run_entry) == 56 &&
                   offsetof(struct arch_run_entry, ret) == 48, "the code's offsets");
    *len = sizeof code;
    return (const uint8_t *)code;
}

/* Where the trampoline's `svc #0` is. */
#define TRAMP_SYSCALL_OFF 12

const uint8_t *arch_trampoline(size_t *len, size_t *stop_offset)
{
    /* blr puts the return address in x30: the call comes back to the next
     * instruction like any call (a PAC-signing callee signs and checks
     * x30 itself).  The result stays in x0, which a syscall-entry stop
     * shows untouched (rt_sigreturn ignores its arguments); x19,
     * callee-saved, holds the frame's stack pointer.  The trampoline is
     * entered by setting pc (BTYPE cleared: no landing pad needed) and
     * branches only directly, so it needs none even on a PROT_BTI page. */
    static const uint32_t code[] = {
        0xd63f0120,     /*     blr x9                 */
        0x9100027f,     /* 1:  mov sp, x19            */
        0xd2801168,     /*     mov x8, #139           */
        0xd4000001,     /*     svc #0                 */
        0x17fffffd,     /*     b 1b                   */
    };
    _Static_assert(SYS_rt_sigreturn == 139, "the trampoline's mov x8");
    *len = sizeof code;
    *stop_offset = TRAMP_SYSCALL_OFF + ARCH_SYSCALL_INSN_LEN;
    return (const uint8_t *)code;
}

int arch_get_regs(pid_t tid, struct arch_regs *r, struct mp_error *err)
{
    memset(r, 0, sizeof *r);
    struct iovec iov = { r->words, PRSTATUS_WORDS * 8 };
    if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_PRSTATUS, &iov) < 0)
        return mp_error_set(err, "cannot read the registers of thread %d: %s",
                            tid, strerror(errno));
    int nr = -1;
    iov = (struct iovec){ &nr, sizeof nr };
    if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_ARM_SYSTEM_CALL, &iov) < 0)
        return mp_error_set(err, "cannot read the system call number of thread %d: %s",
                            tid, strerror(errno));
    w(r)[W_SYSCALLNO] = (uint64_t)(int64_t)nr;
    return 0;
}

int arch_set_regs(pid_t tid, const struct arch_regs *r, struct mp_error *err)
{
    /* The number first: writing it is what skips (-1) a system call at its
     * entry stop; x7 written at a syscall stop is discarded by the kernel
     * (it shows the stop's direction there). */
    int nr = (int)(int64_t)cw(r)[W_SYSCALLNO];
    struct iovec iov = { &nr, sizeof nr };
    if (ptrace(PTRACE_SETREGSET, tid, (void *)NT_ARM_SYSTEM_CALL, &iov) < 0)
        return mp_error_set(err, "cannot set the system call number of thread %d: %s",
                            tid, strerror(errno));
    iov = (struct iovec){ (void *)cw(r), PRSTATUS_WORDS * 8 };
    if (ptrace(PTRACE_SETREGSET, tid, (void *)NT_PRSTATUS, &iov) < 0)
        return mp_error_set(err, "cannot set the registers of thread %d: %s",
                            tid, strerror(errno));
    return 0;
}

/* The saved extended state: NT_PRFPREG (FPSIMD_LEN bytes), then, on a CPU
 * with SVE, NT_ARM_SVE as the kernel gave it (a header and the Z, P and
 * FFR registers when SVE is live, else the FPSIMD view).  A kernel or CPU
 * without SVE refuses NT_ARM_SVE (EINVAL/ENODEV): then the FP/SIMD
 * registers are the whole state. */
static int xstate_save(pid_t tid, struct arch_state *st, struct mp_error *err)
{
    st->xstate = calloc(1, FPSIMD_LEN + SVE_MAX);
    if (!st->xstate)
        return mp_error_set(err, "out of memory saving thread %d's FP/SIMD state", tid);
    struct iovec iov = { st->xstate, FPSIMD_LEN };
    if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_PRFPREG, &iov) < 0 ||
        iov.iov_len != FPSIMD_LEN)
        return mp_error_set(err, "cannot read the FP/SIMD state of thread %d: %s",
                            tid, strerror(errno));
    st->xstate_len = FPSIMD_LEN;
    iov = (struct iovec){ (uint8_t *)st->xstate + FPSIMD_LEN, SVE_MAX };
    if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_ARM_SVE, &iov) == 0)
        st->xstate_len += iov.iov_len;
    return 0;
}

/* Reads the instruction at pc through ptrace (the thread is stopped). */
static bool at_svc(pid_t tid, uint64_t pc)
{
    errno = 0;
    long word = ptrace(PTRACE_PEEKTEXT, tid, (void *)(pc & ~(uint64_t)7), 0);
    if (errno)
        return false;
    uint32_t insn = (uint32_t)((uint64_t)word >> (pc & 4 ? 32 : 0));
    return insn == SVC0;
}

int arch_save(pid_t tid, struct arch_state *st, struct mp_error *err)
{
    memset(st, 0, sizeof *st);
    if (arch_get_regs(tid, &st->regs, err) < 0)
        return -1;
    if (at_svc(tid, cw(&st->regs)[W_PC]))
        w(&st->regs)[W_FLAGS] |= FLAG_AT_SVC;
    if (xstate_save(tid, st, err) < 0) {
        arch_state_free(st);
        return -1;
    }
    return 0;
}

enum xstate_restore arch_xstate_restore_kind(const void *saved, const void *now,
                                             size_t len)
{
    if (memcmp(saved, now, len) == 0)
        return XSTATE_UNCHANGED;
    /* Past FPSIMD_LEN: the SVE view, whose low 128 bits of each Z are
     * the V registers; it differs whenever they do, or SVE state is. */
    if (len <= FPSIMD_LEN)
        return XSTATE_LEGACY_ONLY;
    return XSTATE_FULL;
}

/* Read what the call left and write only what it changed: NT_PRFPREG for
 * the FP/SIMD registers; NT_ARM_SVE when the saved state has it (it also
 * puts back a live SVE state that a system call made during the call
 * discarded, and the vector length). */
static int xstate_restore(pid_t tid, const struct arch_state *st, struct mp_error *err)
{
    static uint8_t now[FPSIMD_LEN + SVE_MAX];
    size_t sve_len = st->xstate_len - FPSIMD_LEN;
    struct iovec iov = { now, FPSIMD_LEN };
    enum xstate_restore kind = XSTATE_FULL;
    if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_PRFPREG, &iov) == 0) {
        iov = (struct iovec){ now + FPSIMD_LEN, sve_len };
        if (!sve_len || (ptrace(PTRACE_GETREGSET, tid, (void *)NT_ARM_SVE, &iov) == 0 &&
                         iov.iov_len == sve_len))
            kind = arch_xstate_restore_kind(st->xstate, now, st->xstate_len);
    }
    if (kind == XSTATE_UNCHANGED)
        return 0;
    const uint8_t *saved = st->xstate;
    long rc;
    if (sve_len) {
        iov = (struct iovec){ (void *)(saved + FPSIMD_LEN), sve_len };
        rc = ptrace(PTRACE_SETREGSET, tid, (void *)NT_ARM_SVE, &iov);
    } else {
        iov = (struct iovec){ (void *)saved, FPSIMD_LEN };
        rc = ptrace(PTRACE_SETREGSET, tid, (void *)NT_PRFPREG, &iov);
    }
    if (rc < 0)
        return mp_error_set(err, "cannot restore the FP/SIMD%s state of thread %d: %s",
                            sve_len ? "/SVE" : "", tid, strerror(errno));
    return 0;
}

int arch_restore(pid_t tid, const struct arch_state *st, struct mp_error *err)
{
    if (xstate_restore(tid, st, err) < 0)
        return -1;
    return arch_set_regs(tid, &st->regs, err);
}

int arch_dwarf_reg(const struct arch_regs *r, int dwarf_regnum, uint64_t *val)
{
    /* AADWARF64: x0..x30 are 0..30, sp 31, pc 32 (libunwind's
     * UNW_AARCH64_PC); the return address column is x30. */
    if (dwarf_regnum < 0 || dwarf_regnum > W_PC)
        return -1;
    *val = cw(r)[dwarf_regnum];
    return 0;
}

void arch_regs_from_pc_sp(struct arch_regs *r, uint64_t pc, uint64_t sp)
{
    memset(r, 0, sizeof *r);
    w(r)[W_PC] = pc;
    w(r)[W_SP] = sp;
    w(r)[W_SYSCALLNO] = (uint64_t)-1;
}

void arch_state_free(struct arch_state *st)
{
    free(st->xstate);
    st->xstate = NULL;
    st->xstate_len = 0;
}

void arch_prepare_call(const struct arch_regs *saved, struct arch_regs *out,
                       uint64_t tramp, uint64_t fn, uint64_t sp, uint64_t frame_sp,
                       const uint64_t *args, size_t nargs)
{
    *out = *saved;
    uint64_t *r = w(out);
    /* Syscall number -1: at the previous call's rt_sigreturn entry stop
     * that skips it; at an interrupt stop it is -1 already. */
    r[W_SYSCALLNO] = (uint64_t)-1;
    r[W_PC] = tramp;
    r[W_X9] = fn;
    r[W_SP] = sp;
    r[W_X19] = frame_sp;
    /* No single-step, and no pending BTI check on the trampoline's first
     * instruction (it is no landing pad). */
    r[W_PSTATE] &= ~(PSR_SS | PSR_BTYPE);
    for (size_t i = 0; i < nargs && i < ARCH_MAX_ARGS; i++)
        r[W_X0 + i] = args[i];
}

uint64_t arch_ip(const struct arch_regs *r)
{
    return cw(r)[W_PC];
}

uint64_t arch_sp(const struct arch_regs *r)
{
    return cw(r)[W_SP];
}

uint64_t arch_perf_user_regs(void)
{
    return (UINT64_C(1) << 29) | (UINT64_C(1) << 31) | (UINT64_C(1) << 32); /* X29, SP, PC */
}

enum syscall_class arch_syscall_class(long nr)
{
    /* asm-generic numbers: arm64 has no poll, select, pause, epoll_wait,
     * fork or vfork (libc uses ppoll, pselect6, rt_sigsuspend,
     * epoll_pwait and clone). */
    switch (nr) {
    case SYS_futex: case SYS_read: case SYS_write: case SYS_readv:
    case SYS_writev: case SYS_pread64: case SYS_pwrite64: case SYS_ppoll:
    case SYS_pselect6: case SYS_nanosleep: case SYS_clock_nanosleep:
    case SYS_wait4: case SYS_waitid: case SYS_accept: case SYS_accept4:
    case SYS_recvfrom: case SYS_recvmsg: case SYS_sendto: case SYS_sendmsg:
    case SYS_connect: case SYS_flock: case SYS_rt_sigsuspend: case SYS_msgrcv:
    case SYS_msgsnd:
        return SYSCALL_RESTARTABLE;
    case SYS_epoll_pwait: case SYS_epoll_pwait2: case SYS_rt_sigtimedwait:
    case SYS_semtimedop: case SYS_semop: case SYS_io_getevents:
    case SYS_io_pgetevents:
        return SYSCALL_EINTR;
    case SYS_clone: case SYS_clone3:
        return SYSCALL_NEW_TASK;
    default:
        return SYSCALL_OTHER;
    }
}

/* ---- the self-restore frame -------------------------------------------- */

#define FPSIMD_MAGIC 0x46508001u
#define SIGINFO_SIZE 128
#define RESERVED_SIZE 4096

/* The kernel's struct ucontext and sigcontext (arch/arm64 uapi), spelled
 * out: __reserved holds records (_aarch64_ctx: magic, size), the
 * fpsimd_context first, ended by a null record. */
struct k_sigcontext {
    uint64_t fault_address;
    uint64_t regs[31];
    uint64_t sp, pc, pstate;
    uint64_t pad;
    uint8_t reserved[RESERVED_SIZE];
};
struct k_ucontext {
    uint64_t uc_flags, uc_link;
    uint64_t ss_sp;
    int32_t ss_flags, ss_pad;
    uint64_t ss_size;
    uint64_t sigmask;
    uint8_t unused[1024 / 8 - 8];
    uint64_t pad;
    struct k_sigcontext mc;
};
struct k_fpsimd_context {
    uint32_t magic, size;
    uint32_t fpsr, fpcr;
    uint8_t vregs[32 * 16];
};
_Static_assert(offsetof(struct k_sigcontext, reserved) == 288, "sigcontext layout");
_Static_assert(offsetof(struct k_ucontext, sigmask) == 40, "ucontext layout");
_Static_assert(offsetof(struct k_ucontext, mc) == 176, "ucontext layout");
_Static_assert(sizeof(struct k_fpsimd_context) == 528, "fpsimd_context layout");

/* Nothing to check: the kernel rewound pc itself (see the top). */
uint64_t arch_restart_pc(const struct arch_regs *r)
{
    (void)r;
    return 0;
}

bool arch_is_syscall_insn(const uint8_t *code)
{
    uint32_t insn;
    memcpy(&insn, code, sizeof insn);
    return insn == SVC0;
}

#define FUTEX_CMD_MASK 127       /* without FUTEX_PRIVATE_FLAG, FUTEX_CLOCK_REALTIME */
#define FUTEX_WAIT_CMD 0
#define TIMER_ABSTIME_FLAG 1    /* clock_nanosleep's flags: TIMER_ABSTIME */

/* The calls that return -ERESTART_RESTARTBLOCK when interrupted: nanosleep
 * and relative clock_nanosleep, and futex waits with a timeout (x3). */
bool arch_restart_hidden(const struct arch_regs *r)
{
    const uint64_t *u = cw(r);
    if (!(u[W_FLAGS] & FLAG_AT_SVC))
        return false;
    switch ((long)u[W_X8]) {
    case SYS_nanosleep:
        return true;
    case SYS_clock_nanosleep:
        return !(u[1] & TIMER_ABSTIME_FLAG);   /* absolute: -ERESTARTNOHAND */
    case SYS_futex:
        return u[3] != 0;
    default:
        return false;
    }
}

/* do_signal's setup_restart_syscall, run when the thread left the stop
 * with pc still on the `svc`, put restart_syscall in x8: the entry stop of
 * that `svc` shows it. */
bool arch_restart_seen(struct arch_regs *saved, const struct arch_regs *at_entry,
                       struct arch_syscall *call)
{
    uint64_t *s = w(saved);
    const uint64_t *e = cw(at_entry);
    if ((long)e[W_SYSCALLNO] != SYS_restart_syscall ||
        e[W_PC] != s[W_PC] + ARCH_SYSCALL_INSN_LEN)
        return false;
    *call = (struct arch_syscall){
        .pc = s[W_PC], .nr = (long)s[W_X8],
        .args = { s[0], s[1], s[2], s[3], s[4], s[5] },
    };
    s[W_X8] = SYS_restart_syscall;
    return true;
}

/* A thread on an `svc` with restart_syscall in x8 goes on with a call the
 * kernel continues (arch_restart_seen put it there, or an earlier stop of
 * memprof's did); restart_syscall takes no arguments, so x0..x5 are still
 * the original call's. */
enum restart_block arch_restart_block(const struct arch_regs *r, struct arch_syscall *call)
{
    const uint64_t *u = cw(r);
    if (!(u[W_FLAGS] & FLAG_AT_SVC) || (long)u[W_X8] != SYS_restart_syscall)
        return RESTART_BLOCK_NONE;
    *call = (struct arch_syscall){
        .pc = u[W_PC], .nr = -1, .args = { u[0], u[1], u[2], u[3], u[4], u[5] },
    };
    return RESTART_BLOCK_CONTINUED;
}

/* A thread at the `svc #0` of ppoll or pselect6 was interrupted in it
 * (the kernel wrote the time left back and rewound pc) or is about to
 * enter it: either way the timeout in memory is what it will wait from
 * when it resumes, so taking the held time off makes it end when it
 * would have. */
enum restart_timeout arch_restart_timeout(const struct arch_regs *r, uint64_t *addr)
{
    const uint64_t *u = cw(r);
    if (!(u[W_FLAGS] & FLAG_AT_SVC))
        return RESTART_TIMEOUT_NONE;
    switch ((long)u[W_X8]) {
    case SYS_pselect6:
        *addr = u[4];
        return u[4] ? RESTART_TIMEOUT_TIMESPEC : RESTART_TIMEOUT_NONE;
    case SYS_ppoll:
        *addr = u[2];
        return u[2] ? RESTART_TIMEOUT_TIMESPEC : RESTART_TIMEOUT_NONE;
    default:
        return RESTART_TIMEOUT_NONE;
    }
}

bool arch_frame_adds_syscall(const struct arch_regs *r)
{
    (void)r;
    return false;   /* no pause() on arm64, and no sleep frame (see below) */
}

/* A call continued through restart_syscall cannot be after rt_sigreturn
 * (it voids the restart block): re-issued as `nr` when that is exact
 * (futex waits but FUTEX_WAIT have absolute deadlines) or only makes it
 * longer for want of knowing what was left (a sleep without a `rem`
 * pointer), else EINTR (the sleep's `rem` holds what was left, the
 * kernel wrote it at the interrupt; FUTEX_WAIT's callers loop). */
static bool frame_reissues(const uint64_t *u, long nr)
{
    switch (nr) {
    case SYS_nanosleep:
        return u[1] == 0;
    case SYS_clock_nanosleep:
        return u[3] == 0;
    case SYS_futex:
        return (u[1] & FUTEX_CMD_MASK) != FUTEX_WAIT_CMD;
    default:
        return false;
    }
}

/* The frame's registers: the thread's own, so that rt_sigreturn resumes it
 * exactly where the interrupt left it, re-issuing a call the kernel had
 * rewound (x8 still holds its number).  Like x86-64's frame, ppoll and
 * pselect6 return EINTR instead: their timeout holds the time left, and
 * a re-issue would add the time the thread was held; a call going on
 * through restart_syscall is re-issued as `reissue_nr` or gives EINTR
 * (frame_reissues). */
static void fill_sigcontext(struct k_sigcontext *mc, const uint64_t *u, long reissue_nr)
{
    memcpy(mc->regs, u, sizeof mc->regs);
    mc->sp = u[W_SP];
    mc->pc = u[W_PC];
    mc->pstate = u[W_PSTATE] & ~(PSR_SS | PSR_BTYPE);
    long nr = (long)u[W_X8];
    if (!(u[W_FLAGS] & FLAG_AT_SVC))
        return;
    if (nr == SYS_restart_syscall && reissue_nr >= 0 && frame_reissues(u, reissue_nr)) {
        mc->regs[W_X8] = (uint64_t)reissue_nr;
    } else if (nr == SYS_ppoll || nr == SYS_pselect6 || nr == SYS_restart_syscall) {
        mc->regs[0] = (uint64_t)-EINTR;
        mc->pc += ARCH_SYSCALL_INSN_LEN;
    }
}

/* Layout, from the thread's stack pointer down (no red zone): the
 * rt_sigframe (siginfo room, then the ucontext), 16-byte aligned, at
 * sigreturn_sp, as setup_rt_frame places it.  __reserved holds the
 * fpsimd_context (required by rt_sigreturn) and the null record.  The SVE
 * state is not put in the frame: a thread that restores itself gets its
 * V registers back, and the bits of Z beyond them, P and FFR are zero
 * (what a system call leaves too; the kernel restores them only from an
 * sve_context record, which memprof does not build).  tramp and
 * hold_mask are unused: no sleep frame on arm64 (rt_sigsuspend is
 * re-issued, see docs/security.md). */
int arch_frame_build(const struct arch_state *st, uint64_t sigmask, uint64_t hold_mask,
                     long reissue_nr, uint64_t tramp, struct arch_frame *f,
                     struct mp_error *err)
{
    (void)hold_mask, (void)tramp;
    memset(f, 0, sizeof *f);
    const uint64_t *u = cw(&st->regs);
    if (!st->xstate || st->xstate_len < FPSIMD_LEN)
        return mp_error_set(err, "the FP/SIMD state of %zu bytes does not fit a signal "
                            "frame", st->xstate_len);
    size_t len = SIGINFO_SIZE + sizeof(struct k_ucontext);
    uint64_t first = (u[W_SP] - len) & ~(uint64_t)15;
    f->base = first;
    f->low = first - 16;
    f->sigreturn_sp = first;
    f->len = len;
    f->img = calloc(1, len);
    if (!f->img)
        return mp_error_set(err, "out of memory");
    struct k_ucontext *k = (struct k_ucontext *)(f->img + SIGINFO_SIZE);
    /* Not a valid ss_flags mode: sigaltstack() fails (-EINVAL, ignored by
     * rt_sigreturn) and the thread keeps its own altstack. */
    k->ss_flags = 3;
    k->sigmask = sigmask;
    fill_sigcontext(&k->mc, u, reissue_nr);
    struct k_fpsimd_context fp = { .magic = FPSIMD_MAGIC, .size = sizeof fp };
    const uint8_t *saved = st->xstate;  /* user_fpsimd_state: vregs, fpsr, fpcr */
    memcpy(fp.vregs, saved, sizeof fp.vregs);
    memcpy(&fp.fpsr, saved + 512, 4);
    memcpy(&fp.fpcr, saved + 516, 4);
    memcpy(k->mc.reserved, &fp, sizeof fp);
    /* the null record after it: already zero */
    return 0;
}

void arch_frame_free(struct arch_frame *f)
{
    free(f->img);
    f->img = NULL;
}

bool arch_at_sigreturn_entry(const struct arch_regs *r, uint64_t tramp_end)
{
    const uint64_t *u = cw(r);
    /* x7 shows the stop's direction; at the exit stop of the skipped call
     * the number is -1. */
    return (long)u[W_SYSCALLNO] == SYS_rt_sigreturn && u[W_PC] == tramp_end &&
           u[W_X7] == PTRACE_SYSCALL_ENTER;
}

uint64_t arch_call_result(const struct arch_regs *r)
{
    return cw(r)[W_X0];
}

void arch_prepare_resigreturn(const struct arch_regs *at_entry, struct arch_regs *out)
{
    *out = *at_entry;
    uint64_t *u = w(out);
    u[W_SYSCALLNO] = (uint64_t)-1;
    u[W_X8] = SYS_rt_sigreturn;
    u[W_PC] -= ARCH_SYSCALL_INSN_LEN;
}
