/* arch.h - everything about the CPU that the remote call needs: the saved
 * register and extended (FPU/SSE/AVX) state of a stopped thread, how to
 * aim it at a function, where the stack pointer goes, the trampoline bytes,
 * and which system calls are safe to interrupt.  Implemented once per
 * architecture in attach/arch_<cpu>.c; nothing else in attach/ knows a
 * register name. */
#ifndef MEMPROF_ARCH_H
#define MEMPROF_ARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/error.h"

/* Opaque register file big enough for any supported architecture. */
struct arch_regs {
    uint64_t words[32];
};

/* Everything of a stopped thread's CPU state that a call may change. */
struct arch_state {
    struct arch_regs regs;
    void *xstate;          /* extended state as PTRACE_GETREGSET gave it */
    size_t xstate_len;     /* size the kernel reported */
};

/* Maximum number of integer arguments arch_setup_call() passes. */
#define ARCH_MAX_ARGS 6

/* Bytes below the stack pointer that leaf code may use without moving it
 * (System V x86-64 red zone). */
size_t arch_red_zone(void);

/* The stack pointer to enter a call with when `scratch` bytes of argument
 * data must live just above it, below the interrupted code's red zone:
 * (sp - red_zone - scratch) rounded down to the ABI's call alignment. */
uint64_t arch_call_sp(uint64_t sp, size_t scratch);

/* Trampoline code: calls the function whose address arch_setup_call() put
 * in a register, then traps.  *trap_offset is where the instruction pointer
 * stands when the trap is reported. */
const uint8_t *arch_trampoline(size_t *len, size_t *trap_offset);

/* Save and restore regs + extended state of a ptrace-stopped thread.
 * arch_restore reads the extended state back first and writes only what
 * differs (see arch_xstate_restore_kind). */
int arch_save(pid_t tid, struct arch_state *st, struct mp_error *err);
int arch_restore(pid_t tid, const struct arch_state *st, struct mp_error *err);
void arch_state_free(struct arch_state *st);

/* How the saved extended state must be written back, given what the thread
 * holds now (both as PTRACE_GETREGSET gave them, len bytes). */
enum xstate_restore {
    XSTATE_UNCHANGED,   /* identical: nothing to write */
    XSTATE_LEGACY_ONLY, /* only the legacy (x87/SSE) area differs */
    XSTATE_FULL,        /* an extended component (AVX...) differs */
};
enum xstate_restore arch_xstate_restore_kind(const void *saved, const void *now,
                                             size_t len);

/* Registers for calling fn(args...) from the trampoline at `tramp` with
 * stack pointer sp, derived from the saved registers: no syscall restart,
 * direction and trap flags cleared. */
void arch_prepare_call(const struct arch_regs *saved, struct arch_regs *out,
                       uint64_t tramp, uint64_t fn, uint64_t sp,
                       const uint64_t *args, size_t nargs);
int arch_set_regs(pid_t tid, const struct arch_regs *r, struct mp_error *err);
int arch_get_regs(pid_t tid, struct arch_regs *r, struct mp_error *err);

/* Register `dwarf_regnum` (the ABI's DWARF numbering, which libunwind's
 * register numbers follow) of a saved register file: 0, or -1 when the
 * number names no general-purpose register. */
int arch_dwarf_reg(const struct arch_regs *r, int dwarf_regnum, uint64_t *val);

/* A register file holding only an instruction and a stack pointer (what
 * /proc/PID/task/TID/syscall tells of a thread that is not stopped). */
void arch_regs_from_pc_sp(struct arch_regs *r, uint64_t pc, uint64_t sp);

uint64_t arch_ip(const struct arch_regs *r);
uint64_t arch_sp(const struct arch_regs *r);
uint64_t arch_return_value(const struct arch_regs *r);

/* What interrupting a thread blocked in system call `nr` does to it. */
enum syscall_class {
    SYSCALL_RESTARTABLE,   /* restarts transparently: futex, read, poll, nanosleep... */
    SYSCALL_OTHER,         /* not known either way */
    SYSCALL_EINTR,         /* returns EINTR to the program: epoll_wait, rt_sigtimedwait... */
};
enum syscall_class arch_syscall_class(long nr);

#endif
