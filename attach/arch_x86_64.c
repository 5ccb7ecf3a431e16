/* arch_x86_64.c - the x86-64 side of a remote call: user_regs_struct,
 * orig_rax and syscall restart, the red zone and 16-byte call alignment,
 * the `call *%rax; int3` trampoline, DF/TF, and NT_X86_XSTATE so that the
 * upper halves of ymm/zmm survive the call. */
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

int arch_restore(pid_t tid, const struct arch_state *st, struct mp_error *err)
{
    /* Extended state first: SETREGS is what makes the kernel see the saved
     * orig_rax/rax again, and it must be the last word. */
    struct iovec iov = { st->xstate, st->xstate_len };
    if (ptrace(PTRACE_SETREGSET, tid, (void *)NT_X86_XSTATE, &iov) < 0)
        return mp_error_set(err, "cannot restore the FPU/AVX state of thread %d: %s",
                            tid, strerror(errno));
    return arch_set_regs(tid, &st->regs, err);
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
