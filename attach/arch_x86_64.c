/* arch_x86_64.c - the x86-64 side of a remote call: user_regs_struct,
 * orig_rax and syscall restart, the red zone and 16-byte call alignment,
 * the `call *%rax; int3` trampoline, DF/TF, and NT_X86_XSTATE so that the
 * upper halves of ymm/zmm survive the call.
 *
 * MXCSR and the x87 control word are left as the thread had them: the
 * System V ABI makes their control bits callee-saved, so whatever modes the
 * program runs with are modes under which it may itself call into jemalloc
 * at any call boundary. */
#include "attach/arch.h"

#include <elf.h>
#include <errno.h>
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

uint64_t arch_call_sp(uint64_t sp, size_t scratch)
{
    /* The ABI wants rsp % 16 == 0 right before `call`; the trampoline's
     * call then pushes the return address like a real caller would. */
    return (sp - RED_ZONE - scratch) & ~(uint64_t)15;
}

const uint8_t *arch_trampoline(size_t *len, size_t *trap_offset)
{
    /* call *%rax ; int3 -- a real call keeps a CET shadow stack balanced,
     * and the trap reports with rip just past the int3. */
    static const uint8_t code[] = { 0xff, 0xd0, 0xcc };
    *len = sizeof code;
    *trap_offset = sizeof code;
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
                       uint64_t tramp, uint64_t fn, uint64_t sp,
                       const uint64_t *args, size_t nargs)
{
    *out = *saved;
    struct user_regs_struct *r = ur(out);
    /* orig_rax = -1: the kernel must not "restart" the interrupted syscall
     * on top of our call when the thread resumes. */
    r->orig_rax = (unsigned long long)-1;
    r->rip = tramp;
    r->rax = fn;
    r->rsp = sp;
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

uint64_t arch_return_value(const struct arch_regs *r)
{
    return cur(r)->rax;
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
    default:
        return SYSCALL_OTHER;
    }
}
