/* x86_64.c - the x86-64 side of a remote call: user_regs_struct,
 * orig_rax and syscall restart, the red zone and 16-byte call alignment,
 * the `call *%rax; ...; rt_sigreturn` trampoline, DF/TF, NT_X86_XSTATE so
 * that the upper halves of ymm/zmm survive the call, and the rt_sigframe
 * (arch/x86/kernel/signal_64.c, fpu/signal.c) a thread restores itself
 * from when memprof dies mid-call.
 *
 * MXCSR and the x87 control word are left as the thread had them: the
 * System V ABI makes their control bits callee-saved, so whatever modes the
 * program runs with are modes under which it may itself call into jemalloc
 * at any call boundary. */
#include "attach/arch/arch.h"

#include <cpuid.h>
#include <elf.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>

_Static_assert(sizeof(struct user_regs_struct) <= sizeof(struct arch_regs),
               "arch_regs too small for user_regs_struct");

#define RED_ZONE 128
#define EFLAGS_TF (1u << 8)
#define EFLAGS_DF (1u << 10)
/* Large enough for every XSAVE layout shipped so far (AMX needs ~11 KiB). */
#define XSTATE_MAX (16 * 1024)
/* End of the XSAVE legacy area (512) and header (64): extended components follow. */
#define XSAVE_HDR_END 576

static struct user_regs_struct *ur(struct arch_regs *r)
{
    return (struct user_regs_struct *)r->words;
}

static const struct user_regs_struct *cur(const struct arch_regs *r)
{
    return (const struct user_regs_struct *)r->words;
}

size_t arch_red_zone(void)
{
    return RED_ZONE;
}

uint64_t arch_call_sp(uint64_t below, size_t scratch)
{
    /* The ABI wants rsp % 16 == 0 right before `call`; the trampoline's
     * call then pushes the return address like a real caller would. */
    return (below - scratch) & ~(uint64_t)15;
}

const uint8_t *arch_capture_callback(size_t *len)
{
    /* rdi: the head (len at 0, cap at 8, truncated at 16, data at 24),
     * rsi: the string.  endbr64 first: jemalloc calls it indirectly. */
    static const uint8_t code[] = {
        0xf3, 0x0f, 0x1e, 0xfa,             /* endbr64                     */
        0x48, 0x8b, 0x07,                   /* mov (%rdi), %rax            */
        0x48, 0x8b, 0x4f, 0x08,             /* mov 8(%rdi), %rcx           */
        0x0f, 0xb6, 0x16,                   /* 1: movzbl (%rsi), %edx      */
        0x84, 0xd2,                         /* test %dl, %dl               */
        0x74, 0x19,                         /* je 3f                       */
        0x48, 0x39, 0xc8,                   /* cmp %rcx, %rax              */
        0x73, 0x0c,                         /* jae 2f                      */
        0x88, 0x54, 0x07, 0x18,             /* mov %dl, 24(%rdi,%rax)      */
        0x48, 0xff, 0xc0,                   /* inc %rax                    */
        0x48, 0xff, 0xc6,                   /* inc %rsi                    */
        0xeb, 0xe8,                         /* jmp 1b                      */
        0x48, 0xc7, 0x47, 0x10, 1, 0, 0, 0, /* 2: movq $1, 16(%rdi)        */
        0x48, 0x89, 0x07,                   /* 3: mov %rax, (%rdi)         */
        0xc3,                               /* ret                         */
    };
    _Static_assert(sizeof(struct arch_capture_head) == 24, "the code's offsets");
    *len = sizeof code;
    return code;
}

const uint8_t *arch_call_runner(size_t *len)
{
    /* rdi: fn, rsi: the entries, rdx: how many.  Three pushes after the
     * return address leave rsp 16-byte aligned for each call; %eax is
     * zeroed for a variadic callee (no vector arguments). */
    static const uint8_t code[] = {
        0xf3, 0x0f, 0x1e, 0xfa,             /* endbr64                  */
        0x53,                               /* push %rbx                */
        0x41, 0x54,                         /* push %r12                */
        0x41, 0x55,                         /* push %r13                */
        0x48, 0x89, 0xfb,                   /* mov %rdi, %rbx           */
        0x49, 0x89, 0xf4,                   /* mov %rsi, %r12           */
        0x49, 0x89, 0xd5,                   /* mov %rdx, %r13           */
        0x4d, 0x85, 0xed,                   /* 1: test %r13, %r13       */
        0x74, 0x2f,                         /* je 2f                    */
        0x49, 0x8b, 0x3c, 0x24,             /* mov (%r12), %rdi         */
        0x49, 0x8b, 0x74, 0x24, 0x08,       /* mov 8(%r12), %rsi        */
        0x49, 0x8b, 0x54, 0x24, 0x10,       /* mov 16(%r12), %rdx       */
        0x49, 0x8b, 0x4c, 0x24, 0x18,       /* mov 24(%r12), %rcx       */
        0x4d, 0x8b, 0x44, 0x24, 0x20,       /* mov 32(%r12), %r8        */
        0x4d, 0x8b, 0x4c, 0x24, 0x28,       /* mov 40(%r12), %r9        */
        0x31, 0xc0,                         /* xor %eax, %eax           */
        0xff, 0xd3,                         /* call *%rbx               */
        0x49, 0x89, 0x44, 0x24, 0x30,       /* mov %rax, 48(%r12)       */
        0x49, 0x83, 0xc4, 0x38,             /* add $56, %r12            */
        0x49, 0xff, 0xcd,                   /* dec %r13                 */
        0xeb, 0xcc,                         /* jmp 1b                   */
        0x41, 0x5d,                         /* 2: pop %r13              */
        0x41, 0x5c,                         /* pop %r12                 */
        0x5b,                               /* pop %rbx                 */
        0xc3,                               /* ret                      */
    };
    _Static_assert(sizeof(struct arch_run_entry) == 56 &&
                   offsetof(struct arch_run_entry, ret) == 48, "the code's offsets");
    *len = sizeof code;
    return code;
}

/* Where the trampoline's system call instruction is: the rt_sigreturn of
 * a call, and also the sleep of a thread that restores itself from inside
 * pause() or sigsuspend() (see sleep_frame), after which `jmp 1b` leads
 * to the rt_sigreturn of its outer frame. */
#define TRAMP_SYSCALL_OFF 13

const uint8_t *arch_trampoline(size_t *len, size_t *stop_offset)
{
    /* A real call keeps a CET shadow stack balanced.  %rdi carries the
     * whole result (an int, or a pointer: fdopen's FILE *) past
     * `mov $15, %eax` (rt_sigreturn ignores its arguments); %rbx,
     * callee-saved, holds the frame's stack pointer. */
    static const uint8_t code[] = {
        0xff, 0xd0,                     /* call *%rax        */
        0x48, 0x89, 0xc7,               /* mov %rax, %rdi    */
        0x48, 0x89, 0xdc,               /* 1: mov %rbx, %rsp */
        0xb8, 0x0f, 0x00, 0x00, 0x00,   /* mov $15, %eax     */
        0x0f, 0x05,                     /* syscall           */
        0xeb, 0xf4,                     /* jmp 1b            */
    };
    *len = sizeof code;
    *stop_offset = TRAMP_SYSCALL_OFF + ARCH_SYSCALL_INSN_LEN;
    return code;
}

int arch_get_regs(pid_t tid, struct arch_regs *r, struct mp_error *err)
{
    memset(r, 0, sizeof *r);
    if (ptrace(PTRACE_GETREGS, tid, 0, ur(r)) < 0)
        return mp_error_set(err, "cannot read the registers of thread %d: %s",
                            tid, strerror(errno));
    return 0;
}

int arch_set_regs(pid_t tid, const struct arch_regs *r, struct mp_error *err)
{
    if (ptrace(PTRACE_SETREGS, tid, 0, cur(r)) < 0)
        return mp_error_set(err, "cannot set the registers of thread %d: %s",
                            tid, strerror(errno));
    return 0;
}

static int xstate_save(pid_t tid, struct arch_state *st, struct mp_error *err)
{
    st->xstate = calloc(1, XSTATE_MAX);
    if (!st->xstate)
        return mp_error_set(err, "out of memory saving thread %d's FPU state", tid);
    struct iovec iov = { st->xstate, XSTATE_MAX };
    /* The kernel shortens iov_len to the real XSAVE size of this CPU. */
    if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_X86_XSTATE, &iov) < 0)
        return mp_error_set(err, "cannot read the FPU/AVX state of thread %d: %s",
                            tid, strerror(errno));
    st->xstate_len = iov.iov_len;
    return 0;
}

int arch_save(pid_t tid, struct arch_state *st, struct mp_error *err)
{
    memset(st, 0, sizeof *st);
    if (arch_get_regs(tid, &st->regs, err) < 0)
        return -1;
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
    /* Bytes XSAVE_HDR_END.. hold the extended components (AVX upper
     * halves, AVX-512, PKRU...).  The header between only records which
     * components are in use; equal values make it invisible. */
    if (len <= XSAVE_HDR_END ||
        memcmp((const char *)saved + XSAVE_HDR_END, (const char *)now + XSAVE_HDR_END,
               len - XSAVE_HDR_END) == 0)
        return XSTATE_LEGACY_ONLY;
    return XSTATE_FULL;
}

/* PTRACE_SETREGSET of NT_X86_XSTATE vmallocs and vfrees a kernel buffer
 * (8 us alone, 20-50 us with the TLB flush while the target's other threads
 * run); SETFPREGS writes the 512-byte legacy area from the kernel stack.
 * So: read what the call left, and write only what it changed. */
static int xstate_restore(pid_t tid, const struct arch_state *st, struct mp_error *err)
{
    static uint8_t now[XSTATE_MAX];
    struct iovec iov = { now, st->xstate_len };
    enum xstate_restore kind = XSTATE_FULL;
    if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_X86_XSTATE, &iov) == 0 &&
        iov.iov_len == st->xstate_len)
        kind = arch_xstate_restore_kind(st->xstate, now, st->xstate_len);
    long rc = 0;
    if (kind == XSTATE_LEGACY_ONLY)
        rc = ptrace(PTRACE_SETFPREGS, tid, 0, st->xstate);
    if (kind == XSTATE_FULL || rc < 0) {
        iov = (struct iovec){ st->xstate, st->xstate_len };
        rc = ptrace(PTRACE_SETREGSET, tid, (void *)NT_X86_XSTATE, &iov);
    }
    if (rc < 0)
        return mp_error_set(err, "cannot restore the FPU/AVX state of thread %d: %s",
                            tid, strerror(errno));
    return 0;
}

int arch_restore(pid_t tid, const struct arch_state *st, struct mp_error *err)
{
    /* Extended state first: SETREGS is what makes the kernel see the saved
     * orig_rax/rax again, and it must be the last word. */
    if (xstate_restore(tid, st, err) < 0)
        return -1;
    return arch_set_regs(tid, &st->regs, err);
}

int arch_dwarf_reg(const struct arch_regs *r, int dwarf_regnum, uint64_t *val)
{
    const struct user_regs_struct *u = cur(r);
    /* DWARF x86-64 order: rax rdx rcx rbx rsi rdi rbp rsp r8..r15, then
     * the return address column (rip). */
    const unsigned long long *by_number[] = {
        &u->rax, &u->rdx, &u->rcx, &u->rbx, &u->rsi, &u->rdi, &u->rbp, &u->rsp,
        &u->r8, &u->r9, &u->r10, &u->r11, &u->r12, &u->r13, &u->r14, &u->r15, &u->rip,
    };
    if (dwarf_regnum < 0 || dwarf_regnum >= (int)(sizeof by_number / sizeof *by_number))
        return -1;
    *val = *by_number[dwarf_regnum];
    return 0;
}

void arch_regs_from_pc_sp(struct arch_regs *r, uint64_t pc, uint64_t sp)
{
    memset(r, 0, sizeof *r);
    ur(r)->rip = pc;
    ur(r)->rsp = sp;
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
    struct user_regs_struct *r = ur(out);
    /* orig_rax = -1: the kernel must not "restart" the interrupted syscall
     * on top of our call when the thread resumes, nor run the
     * rt_sigreturn it may stand at. */
    r->orig_rax = (unsigned long long)-1;
    r->rip = tramp;
    r->rax = fn;
    r->rsp = sp;
    r->rbx = frame_sp;
    r->eflags &= ~(unsigned long long)(EFLAGS_DF | EFLAGS_TF);
    unsigned long long *slot[ARCH_MAX_ARGS] = { &r->rdi, &r->rsi, &r->rdx,
                                                &r->rcx, &r->r8, &r->r9 };
    for (size_t i = 0; i < nargs && i < ARCH_MAX_ARGS; i++)
        *slot[i] = args[i];
}

uint64_t arch_ip(const struct arch_regs *r)
{
    return cur(r)->rip;
}

uint64_t arch_sp(const struct arch_regs *r)
{
    return cur(r)->rsp;
}

uint64_t arch_perf_user_regs(void)
{
    return (1u << 6) | (1u << 7) | (1u << 8);       /* PERF_REG_X86_BP, SP, IP */
}

enum syscall_class arch_syscall_class(long nr)
{
    switch (nr) {
    /* Interrupted by a ptrace stop these return -ERESTART*: with orig_rax
     * and rax restored the kernel re-issues them (timeouts continue). */
    case SYS_futex: case SYS_read: case SYS_write: case SYS_readv:
    case SYS_writev: case SYS_pread64: case SYS_pwrite64: case SYS_poll:
    case SYS_ppoll: case SYS_select: case SYS_pselect6: case SYS_nanosleep:
    case SYS_clock_nanosleep: case SYS_wait4: case SYS_waitid:
    case SYS_accept: case SYS_accept4: case SYS_recvfrom: case SYS_recvmsg:
    case SYS_sendto: case SYS_sendmsg: case SYS_connect: case SYS_flock:
    case SYS_pause: case SYS_rt_sigsuspend: case SYS_msgrcv: case SYS_msgsnd:
        return SYSCALL_RESTARTABLE;
    /* These return EINTR on any interruption, ptrace stops included. */
    case SYS_epoll_wait: case SYS_epoll_pwait: case SYS_epoll_pwait2:
    case SYS_rt_sigtimedwait: case SYS_semtimedop: case SYS_semop:
    case SYS_io_getevents: case SYS_io_pgetevents:
        return SYSCALL_EINTR;
    /* A fork holds the memory map while it copies it (milliseconds for a
     * large process), a vfork parent waits for its child's exec. */
    case SYS_clone: case SYS_clone3: case SYS_fork: case SYS_vfork:
        return SYSCALL_NEW_TASK;
    default:
        return SYSCALL_OTHER;
    }
}

/* ---- the self-restore frame -------------------------------------------- */

#define ERESTARTSYS 512
#define ERESTARTNOINTR 513
#define ERESTARTNOHAND 514
#define ERESTART_RESTARTBLOCK 516
#define FP_XSTATE_MAGIC1 0x46505853u
#define FP_XSTATE_MAGIC2 0x46505845u
#define UC_FP_XSTATE 0x1
#define UC_SIGCONTEXT_SS 0x2
#define UC_STRICT_RESTORE_SS 0x4
#define SW_RESERVED_OFF 464     /* fxregs_state.sw_reserved */
#define XFEATURE_TILEDATA 18    /* enabled per task (XFD): not in every sigframe */
#define SIGINFO_SIZE 128

/* The kernel's struct ucontext and sigcontext_64 (uapi), spelled out: the
 * libc types differ in the mask size and names. */
struct k_sigcontext {
    uint64_t r8, r9, r10, r11, r12, r13, r14, r15;
    uint64_t di, si, bp, bx, dx, ax, cx, sp, ip, flags;
    uint16_t cs, gs, fs, ss;
    uint64_t err, trapno, oldmask, cr2, fpstate;
    uint64_t reserved1[8];
};
struct k_ucontext {
    uint64_t uc_flags, uc_link;
    uint64_t ss_sp;
    int32_t ss_flags, ss_pad;
    uint64_t ss_size;
    struct k_sigcontext mc;
    uint64_t sigmask;
};
_Static_assert(sizeof(struct k_sigcontext) == 256, "sigcontext_64 layout");
_Static_assert(offsetof(struct k_ucontext, mc) == 40, "ucontext layout");
_Static_assert(offsetof(struct k_ucontext, sigmask) == 296, "ucontext layout");

/* struct _fpx_sw_bytes: tells rt_sigreturn the frame has full XSAVE state. */
struct fpx_sw_bytes {
    uint32_t magic1, extended_size;
    uint64_t xfeatures;
    uint32_t xstate_size, padding[7];
};
_Static_assert(sizeof(struct fpx_sw_bytes) == 48, "fpx_sw_bytes layout");

uint64_t arch_restart_pc(const struct arch_regs *r)
{
    const struct user_regs_struct *u = cur(r);
    if ((long long)u->orig_rax < 0)
        return 0;
    switch (-(long long)u->rax) {
    case ERESTARTSYS: case ERESTARTNOINTR: case ERESTARTNOHAND:
    case ERESTART_RESTARTBLOCK:
        return u->rip - ARCH_SYSCALL_INSN_LEN;
    default:
        return 0;
    }
}

bool arch_is_syscall_insn(const uint8_t *code)
{
    /* syscall, or int $0x80: both re-entered by rip -= 2. */
    return (code[0] == 0x0f && code[1] == 0x05) || (code[0] == 0xcd && code[1] == 0x80);
}

enum restart_block arch_restart_block(const struct arch_regs *r, struct arch_syscall *call)
{
    const struct user_regs_struct *u = cur(r);
    if ((long long)u->orig_rax < 0 || u->rax != (unsigned long long)-ERESTART_RESTARTBLOCK)
        return RESTART_BLOCK_NONE;
    /* restart_syscall takes no arguments: the registers still hold the
     * original call's. */
    *call = (struct arch_syscall){
        .pc = u->rip - ARCH_SYSCALL_INSN_LEN,
        .nr = u->orig_rax == SYS_restart_syscall ? -1 : (long)u->orig_rax,
        .args = { u->rdi, u->rsi, u->rdx, u->r10, u->r8, u->r9 },
    };
    return call->nr < 0 ? RESTART_BLOCK_CONTINUED : RESTART_BLOCK_CALL;
}

bool arch_restart_hidden(const struct arch_regs *r)
{
    (void)r;
    return false;   /* -ERESTART_RESTARTBLOCK is in rax at the stop */
}

bool arch_restart_seen(struct arch_regs *saved, const struct arch_regs *at_entry,
                       struct arch_syscall *call)
{
    (void)saved, (void)at_entry, (void)call;
    return false;
}

enum restart_timeout arch_restart_timeout(const struct arch_regs *r, uint64_t *addr)
{
    const struct user_regs_struct *u = cur(r);
    /* poll_select_finish() writes the time left and returns -ERESTARTNOHAND,
     * which a stop without a handler turns into a restart. */
    if (u->rax != (unsigned long long)-ERESTARTNOHAND)
        return RESTART_TIMEOUT_NONE;
    switch ((long long)u->orig_rax) {
    case SYS_select:
        *addr = u->r8;
        return u->r8 ? RESTART_TIMEOUT_TIMEVAL : RESTART_TIMEOUT_NONE;
    case SYS_pselect6:
        *addr = u->r8;
        return u->r8 ? RESTART_TIMEOUT_TIMESPEC : RESTART_TIMEOUT_NONE;
    case SYS_ppoll:
        *addr = u->rdx;
        return u->rdx ? RESTART_TIMEOUT_TIMESPEC : RESTART_TIMEOUT_NONE;
    default:
        return RESTART_TIMEOUT_NONE;
    }
}

#define FUTEX_CMD_MASK 127       /* without FUTEX_PRIVATE_FLAG, FUTEX_CLOCK_REALTIME */
#define FUTEX_WAIT_CMD 0

/* How the self-restore frame resumes an interrupted call that the kernel
 * would have continued exactly and that rt_sigreturn cannot (it sets
 * orig_rax = -1, voids the restart block and delivers any signal pending
 * before the call is entered again): re-issue `nr` from its instruction,
 * or return EINTR when re-issuing would sleep longer than the call had
 * left and the program can go on from EINTR (every caller of these must
 * handle it: a caught signal gives it). */
static bool self_restore_reissues(const struct user_regs_struct *u, long nr, long err,
                                  bool sleep_frame)
{
    if (err == ERESTARTNOHAND) {
        /* select, pselect6, ppoll: the time left is in their own timeout,
         * written back by the kernel, so a program that loops goes on with
         * exactly that, where a restart would add the time the thread was
         * held and miss the EINTR a handler run meanwhile must cause.
         * pause and rt_sigsuspend give EINTR too, but only after the
         * sleep frame waited for a handler to run (see sleep_frame);
         * without one they restart (a spurious EINTR would read as a
         * caught signal) and wait on even if a handler ran meanwhile.
         * The rest restart. */
        return nr != SYS_select && nr != SYS_pselect6 && nr != SYS_ppoll &&
               !(sleep_frame && (nr == SYS_pause || nr == SYS_rt_sigsuspend));
    }
    if (err != ERESTART_RESTARTBLOCK)
        return true;
    switch (nr) {
    case SYS_futex:
        /* FUTEX_WAIT's timeout is relative (would start over); the others'
         * deadlines are absolute, so re-issuing them is exact. */
        return (u->rsi & FUTEX_CMD_MASK) != FUTEX_WAIT_CMD;
    case SYS_nanosleep:
    case SYS_clock_nanosleep:
        /* With a `rem` pointer the kernel wrote the time left there when it
         * was interrupted: EINTR lets the program sleep just that.  Without
         * one nothing tells what is left, and EINTR would end the sleep
         * early: re-issued, it lasts longer, never shorter. */
        return (nr == SYS_nanosleep ? u->rsi : u->r10) == 0;
    default:
        return false;   /* poll and the rest: their timeout would start over */
    }
}

/* The registers a thread resumes with after rt_sigreturn: apply the restart
 * the kernel would have made on resume (see self_restore_reissues).
 * -ERESTART_RESTARTBLOCK cannot be resumed through restart_syscall: the
 * original call is re-issued (`reissue_nr` when the registers show
 * restart_syscall: the number learnt at an earlier stop), or EINTR is
 * given, as a signal handler would have, also when the original is
 * unknown. */
static void resume_regs(const struct user_regs_struct *u, long reissue_nr, bool sleep_frame,
                        uint64_t *rax, uint64_t *rip)
{
    *rax = u->rax;
    *rip = u->rip;
    if ((long long)u->orig_rax < 0)
        return;
    long err = -(long long)u->rax;
    long nr = u->orig_rax == SYS_restart_syscall ? reissue_nr : (long)u->orig_rax;
    switch (err) {
    case ERESTARTSYS: case ERESTARTNOINTR: case ERESTARTNOHAND:
    case ERESTART_RESTARTBLOCK:
        if (nr >= 0 && self_restore_reissues(u, nr, err, sleep_frame)) {
            *rax = (uint64_t)nr;
            *rip -= ARCH_SYSCALL_INSN_LEN;
        } else {
            *rax = (uint64_t)-EINTR;
        }
        break;
    }
}

static void fill_sigcontext(struct k_sigcontext *mc, const struct user_regs_struct *u,
                            long reissue_nr, bool sleep_frame)
{
    mc->r8 = u->r8; mc->r9 = u->r9; mc->r10 = u->r10; mc->r11 = u->r11;
    mc->r12 = u->r12; mc->r13 = u->r13; mc->r14 = u->r14; mc->r15 = u->r15;
    mc->di = u->rdi; mc->si = u->rsi; mc->bp = u->rbp; mc->bx = u->rbx;
    mc->dx = u->rdx; mc->cx = u->rcx; mc->sp = u->rsp;
    mc->flags = u->eflags;
    mc->cs = (uint16_t)u->cs;
    mc->ss = (uint16_t)u->ss;   /* restored as is: UC_STRICT_RESTORE_SS */
    resume_regs(u, reissue_nr, sleep_frame, &mc->ax, &mc->ip);
}

/* Bytes of the standard-format XSAVE area the frame carries: up to the end
 * of the last user feature (CPUID 0xD gives each one's offset and size),
 * never more than the kernel gave.  AMX tile data is left out: a task
 * without AMX permission has a smaller signal frame and the kernel would
 * refuse the whole extended state. */
static size_t frame_xstate_size(uint64_t xfeatures, size_t have)
{
    /* CPUID traps to the hypervisor in a VM (tens of us per stop): the
     * answer for the last feature set is kept, they never change. */
    static uint64_t cached_features;
    static size_t cached_end;
    if (xfeatures == cached_features && cached_end)
        return cached_end <= have ? cached_end : 0;
    size_t end = XSAVE_HDR_END;
    for (unsigned i = 2; i < 63; i++) {
        unsigned a, b, c, d;
        if (!(xfeatures >> i & 1) || !__get_cpuid_count(0xd, i, &a, &b, &c, &d))
            continue;
        if (b + a > end)
            end = b + a;
    }
    cached_features = xfeatures;
    cached_end = end;
    return end <= have ? end : 0;
}

static int frame_xstate(const struct arch_state *st, uint8_t *fp, size_t *size,
                        struct mp_error *err)
{
    uint64_t xcr0;  /* ptrace puts the user XCR0 where signal frames put sw bytes */
    memcpy(&xcr0, (const uint8_t *)st->xstate + SW_RESERVED_OFF, sizeof xcr0);
    uint64_t xfeatures = xcr0 & ~(1ull << XFEATURE_TILEDATA);
    size_t n = frame_xstate_size(xfeatures, st->xstate_len);
    if (st->xstate_len < XSAVE_HDR_END || n == 0)
        return mp_error_set(err, "the FPU state of %zu bytes does not fit a signal "
                            "frame", st->xstate_len);
    memcpy(fp, st->xstate, n);
    struct fpx_sw_bytes sw = { .magic1 = FP_XSTATE_MAGIC1,
                               .extended_size = (uint32_t)n + 4,
                               .xfeatures = xfeatures, .xstate_size = (uint32_t)n };
    memcpy(fp + SW_RESERVED_OFF, &sw, sizeof sw);
    uint32_t magic2 = FP_XSTATE_MAGIC2;
    memcpy(fp + n, &magic2, sizeof magic2);
    *size = n + 4;
    return 0;
}

/* A thread interrupted in pause() or rt_sigsuspend() waits for a signal
 * handler to run, and the kernel ends the wait with EINTR as soon as one
 * has (-ERESTARTNOHAND: restarted only when no handler ran).  rt_sigreturn
 * cannot give that: a signal that came while the thread was held is
 * delivered as it returns, before a re-issued wait, which then sleeps on
 * after the signal it was waiting for. */
static bool waits_for_handler(const struct user_regs_struct *u)
{
    return u->rax == (unsigned long long)-ERESTARTNOHAND &&
           (u->orig_rax == SYS_pause || u->orig_rax == SYS_rt_sigsuspend);
}

bool arch_frame_adds_syscall(const struct arch_regs *r)
{
    const struct user_regs_struct *u = cur(r);
    return waits_for_handler(u) && u->orig_rax == SYS_pause;
}

/* For such a thread the frame rt_sigreturn first restores is this sleep
 * frame, below the thread's own frame `outer` (whose registers give EINTR
 * and whose mask is the thread's): it runs the trampoline's system call as
 * rt_sigsuspend with the mask the thread waited with (pause: its own mask,
 * the outer frame's uc_sigmask; sigsuspend: its own argument, re-read as a
 * kernel restart would), under `hold_mask` until then, so that a signal
 * that came while the thread was held is delivered inside that wait.  The
 * wait ends only when a handler has run (a default-ignored signal or a
 * stop restarts it, as the kernel restarts pause), and then `jmp 1b` does
 * rt_sigreturn on the outer frame (%rbx, %rsp), which puts back the
 * thread's registers and mask with -1 EINTR: once per handler run, as
 * without memprof.  No FPU state: rt_sigreturn clears it, and the outer
 * frame restores the thread's. */
static void sleep_frame(const struct k_ucontext *outer_uc, uint64_t outer, uint64_t tramp,
                        uint64_t hold_mask, const struct user_regs_struct *u,
                        struct k_ucontext *out)
{
    *out = (struct k_ucontext){ .uc_flags = UC_SIGCONTEXT_SS | UC_STRICT_RESTORE_SS,
                                .ss_flags = 3, .sigmask = hold_mask };
    out->mc = outer_uc->mc;
    out->mc.ip = tramp + TRAMP_SYSCALL_OFF;
    out->mc.ax = SYS_rt_sigsuspend;
    if (u->orig_rax == SYS_pause) {
        out->mc.di = outer + offsetof(struct k_ucontext, sigmask);
        out->mc.si = sizeof outer_uc->sigmask;
    }
    /* Handlers run below the stack pointer's red zone: the outer frame
     * stays intact above it. */
    out->mc.sp = outer;
    out->mc.bx = outer;
    out->mc.oldmask = hold_mask;
    out->mc.fpstate = 0;
}

/* Layout, from the thread's stack pointer down: red zone; XSAVE area +
 * MAGIC2, 64-byte aligned (XRSTOR faults otherwise); siginfo room and
 * ucontext (rt_sigreturn checks the whole rt_sigframe is accessible);
 * the pretcode slot at sigreturn_sp - 8, which the trampoline's call
 * overwrites with its return address (rt_sigreturn never reads it).  A
 * thread that waits for a handler has the sleep frame (ucontext, siginfo
 * room, pretcode slot) below that, and sigreturn_sp is the sleep frame's. */
int arch_frame_build(const struct arch_state *st, uint64_t sigmask, uint64_t hold_mask,
                     long reissue_nr, uint64_t tramp, struct arch_frame *f,
                     struct mp_error *err)
{
    memset(f, 0, sizeof *f);
    const struct user_regs_struct *u = cur(&st->regs);
    uint8_t *fpbuf = calloc(1, XSTATE_MAX + 8);
    size_t fplen = 0;
    if (!fpbuf)
        return mp_error_set(err, "out of memory");
    if (frame_xstate(st, fpbuf, &fplen, err) < 0) {
        free(fpbuf);
        return -1;
    }
    uint64_t fp = (u->rsp - RED_ZONE - fplen) & ~(uint64_t)63;
    uint64_t uc = (fp - sizeof(struct k_ucontext) - SIGINFO_SIZE) & ~(uint64_t)15;
    bool sleeps = tramp && waits_for_handler(u);
    uint64_t first = sleeps ? (uc - 8 - sizeof(struct k_ucontext) - SIGINFO_SIZE) &
                                  ~(uint64_t)15
                            : uc;
    f->base = first;
    f->low = first - 16;
    f->sigreturn_sp = first;
    f->len = fp + fplen - first;
    f->img = calloc(1, f->len);
    if (!f->img) {
        free(fpbuf);
        return mp_error_set(err, "out of memory");
    }
    memcpy(f->img + (fp - first), fpbuf, fplen);
    free(fpbuf);
    struct k_ucontext k = { .uc_flags = UC_FP_XSTATE | UC_SIGCONTEXT_SS |
                                        UC_STRICT_RESTORE_SS,
                            /* Not a valid ss_flags mode: sigaltstack()
                             * fails (-EINVAL, ignored by rt_sigreturn)
                             * and the thread keeps its own altstack. */
                            .ss_flags = 3,
                            .sigmask = sigmask };
    fill_sigcontext(&k.mc, u, reissue_nr, sleeps);
    k.mc.oldmask = sigmask;
    k.mc.fpstate = fp;
    memcpy(f->img + (uc - first), &k, sizeof k);
    if (sleeps) {
        struct k_ucontext s;
        sleep_frame(&k, uc, tramp, hold_mask, u, &s);
        memcpy(f->img, &s, sizeof s);
    }
    return 0;
}

void arch_frame_free(struct arch_frame *f)
{
    free(f->img);
    f->img = NULL;
}

bool arch_at_sigreturn_entry(const struct arch_regs *r, uint64_t tramp_end)
{
    const struct user_regs_struct *u = cur(r);
    /* At a syscall-entry stop rax is -ENOSYS (entry_SYSCALL_64 puts it
     * there); at the exit stop of the skipped call orig_rax is -1. */
    return u->orig_rax == SYS_rt_sigreturn && u->rip == tramp_end &&
           u->rax == (unsigned long long)-ENOSYS;
}

uint64_t arch_call_result(const struct arch_regs *r)
{
    return cur(r)->rdi;
}

void arch_prepare_resigreturn(const struct arch_regs *at_entry, struct arch_regs *out)
{
    *out = *at_entry;
    struct user_regs_struct *u = ur(out);
    u->orig_rax = (unsigned long long)-1;
    u->rax = SYS_rt_sigreturn;
    u->rip -= ARCH_SYSCALL_INSN_LEN;
}
