/* arch.h - everything about the CPU that the remote call needs: the saved
 * register and extended (FPU/SSE/AVX) state of a stopped thread, how to
 * aim it at a function, where the stack pointer goes, the trampoline bytes,
 * and which system calls are safe to interrupt.  Implemented once per
 * architecture in attach/arch/<cpu>.c; nothing else in attach/ knows a
 * register name. */
#ifndef MEMPROF_ARCH_H
#define MEMPROF_ARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/base/error.h"

/* Opaque register file big enough for any supported architecture
 * (x86-64: user_regs_struct, 27 words; aarch64: user_pt_regs, 34 words,
 * and the syscall number NT_ARM_SYSTEM_CALL shows). */
struct arch_regs {
    uint64_t words[40];
};

/* Everything of a stopped thread's CPU state that a call may change. */
struct arch_state {
    struct arch_regs regs;
    void *xstate;          /* extended state as PTRACE_GETREGSET gave it */
    size_t xstate_len;     /* size the kernel reported */
};

/* Maximum number of integer arguments arch_prepare_call() passes. */
#define ARCH_MAX_ARGS 6

/* Bytes below the stack pointer that leaf code may use without moving it
 * (System V x86-64 red zone: 128; AAPCS64 has none: 0). */
size_t arch_red_zone(void);

/* The stack pointer to enter a call with when `scratch` bytes of argument
 * data must live just above it, all below address `below` (the lowest
 * byte of the self-restore frame, itself under the red zone):
 * (below - scratch) rounded down to the ABI's call alignment. */
uint64_t arch_call_sp(uint64_t below, size_t scratch);

/* Trampoline code: calls the function whose address arch_prepare_call()
 * put in a register, keeps its result in a register the next step leaves
 * alone, points the stack at the self-restore frame and enters
 * rt_sigreturn.  *stop_offset is where the instruction pointer stands at
 * that system call's entry stop.  There is no trap: a thread whose tracer
 * vanished restores itself instead of dying.  A self-restore frame may
 * also resume a thread at that system call (see arch_frame_build). */
const uint8_t *arch_trampoline(size_t *len, size_t *stop_offset);

/* A write callback `void cb(void *opaque, const char *s)` as
 * position-independent code, for jemalloc's malloc_stats_print and
 * prof_recent dumps: opaque points to a capture buffer laid out as
 * struct arch_capture_head followed by `cap` bytes; each string is
 * appended without its NUL until the buffer is full, after which
 * `truncated` is set and the rest dropped.  No call, no stack use, no
 * write outside the buffer. */
struct arch_capture_head {
    uint64_t len, cap, truncated;
};
const uint8_t *arch_capture_callback(size_t *len);

/* A call runner `void run(uint64_t fn, struct arch_run_entry *v, uint64_t
 * n)` as position-independent code: fn(v[i].args...) for each entry in
 * order, each result stored in v[i].ret.  It keeps every callee-saved
 * register and the ABI's stack alignment, and makes each call like a real
 * caller (so a CET shadow stack stays balanced): many calls of one
 * function for the price of one remote call. */
struct arch_run_entry {
    uint64_t args[ARCH_MAX_ARGS];
    uint64_t ret;
};
const uint8_t *arch_call_runner(size_t *len);

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
 * stack pointer sp, derived from the saved registers: no syscall restart
 * (also skips the rt_sigreturn a thread may be stopped at), direction and
 * trap flags cleared, `frame_sp` (arch_frame.sigreturn_sp) where the
 * trampoline finds it after the call. */
void arch_prepare_call(const struct arch_regs *saved, struct arch_regs *out,
                       uint64_t tramp, uint64_t fn, uint64_t sp, uint64_t frame_sp,
                       const uint64_t *args, size_t nargs);

/* ---- the self-restore frame ------------------------------------------
 * Before a thread is redirected, a signal frame holding its saved state is
 * built below its red zone; the trampoline ends in rt_sigreturn on it.
 * memprof stops the thread at that system call's entry and skips it (it
 * restores exactly itself); if memprof dies, the kernel detaches and the
 * thread restores itself: registers, extended state, signal mask, and
 * the interrupted system call re-entered. */
struct arch_frame {
    uint8_t *img;           /* bytes to write at `base` */
    size_t len;
    uint64_t base;          /* lowest address written */
    uint64_t low;           /* lowest address reserved: scratch goes below */
    uint64_t sigreturn_sp;  /* stack pointer at rt_sigreturn */
};

/* When the saved registers show a system call the kernel would restart on
 * resume: the address of its ARCH_SYSCALL_INSN_LEN-byte instruction (to
 * check with arch_is_syscall_insn), else 0. */
uint64_t arch_restart_pc(const struct arch_regs *r);
#if defined(__aarch64__)
#define ARCH_SYSCALL_INSN_LEN 4     /* svc #0 */
#else
#define ARCH_SYSCALL_INSN_LEN 2     /* syscall, int $0x80 */
#endif

/* The end of the addresses the kernel hands a process that asks for no
 * higher (mmap without a hint above it): 47 bits on x86-64 (5-level
 * paging goes higher only on request; the [vsyscall] page lies above),
 * 48 on arm64, where the libraries and stacks sit just below 2^48 (52-bit
 * addresses, too, only on request). */
#if defined(__aarch64__)
#define ARCH_USER_VA_END (1ull << 48)
#else
#define ARCH_USER_VA_END (1ull << 47)
#endif

/* The programs memprof can call into: its own CPU's (ELF e_machine). */
#if defined(__aarch64__)
#define ARCH_ELF_MACHINE 183        /* EM_AARCH64 */
#define ARCH_NAME "arm64 (aarch64)"
#else
#define ARCH_ELF_MACHINE 62         /* EM_X86_64 */
#define ARCH_NAME "x86-64"
#endif
bool arch_is_syscall_insn(const uint8_t *code);

/* A system call the kernel resumes through its restart block (relative
 * sleeps, timed futex and poll waits): where it was issued, its number,
 * its arguments. */
struct arch_syscall {
    uint64_t pc;
    long nr;
    uint64_t args[ARCH_MAX_ARGS];
};
enum restart_block {
    RESTART_BLOCK_NONE,      /* not stopped in such a call */
    RESTART_BLOCK_CALL,      /* stopped in one: *call complete */
    RESTART_BLOCK_CONTINUED, /* in restart_syscall, continuing one after an
                              * earlier stop: call->nr = -1 (gone from the
                              * registers), pc and args the original's */
};
enum restart_block arch_restart_block(const struct arch_regs *r, struct arch_syscall *call);

/* arm64: the kernel decides before the stop memprof sees whether a call
 * it rewound goes on through restart_syscall (its restart block: a
 * relative sleep keeps its end), and keeps that out of the registers
 * until the thread resumes.  arch_restart_hidden: the registers show a
 * call that may (relative sleeps, timed futex waits), for the engine to
 * let the thread run to that system call's entry stop, registers
 * at_entry, where arch_restart_seen tells: true when it became
 * restart_syscall, *call then the original call and *saved changed to
 * go on through restart_syscall when restored.  x86-64 shows it at the
 * stop (arch_restart_block): never hidden. */
bool arch_restart_hidden(const struct arch_regs *r);
bool arch_restart_seen(struct arch_regs *saved, const struct arch_regs *at_entry,
                       struct arch_syscall *call);

/* An interrupted system call the kernel restarts with the relative
 * timeout it wrote back to the caller's memory when it was interrupted
 * (select: a timeval; pselect6, ppoll: a timespec): the restart waits that
 * long again from when the thread resumes, so the time it was held would
 * be added to its sleep.  Its kind, and *addr where the timeout is. */
enum restart_timeout {
    RESTART_TIMEOUT_NONE,
    RESTART_TIMEOUT_TIMEVAL,   /* seconds, microseconds: two 64-bit words */
    RESTART_TIMEOUT_TIMESPEC,  /* seconds, nanoseconds: two 64-bit words */
};
enum restart_timeout arch_restart_timeout(const struct arch_regs *r, uint64_t *addr);

/* Build the frame for a thread stopped with state st and signal mask
 * sigmask, for calls through the trampoline at `tramp` made with signal
 * mask hold_mask (tramp 0: see arch_frame_adds_syscall).  rt_sigreturn cannot resume an interrupted system call the way
 * the kernel would (it voids the restart block and delivers a pending
 * signal before the call is entered again), so the frame re-issues the
 * call when that is exact or only makes it last longer for want of
 * knowing what was left (a sleep without a `rem` pointer), and gives
 * EINTR when the program can go on from there with what was left (the
 * timeout select/pselect6/ppoll and nanosleep's `rem` hold it) or when a
 * re-issue would start a relative timeout over (poll, FUTEX_WAIT).  A
 * call continued through restart_syscall is re-issued as `reissue_nr`
 * (its original number, learnt at an earlier stop), or, when that is -1,
 * returns EINTR.  A thread in pause() or sigsuspend() first waits in
 * the trampoline, with the mask it waited with, until a handler has run
 * (at once if a signal came while it was held), and then returns EINTR:
 * once per handler run, never spuriously, as the kernel would.  Returns
 * -1 (err set) when the extended state cannot be put in a frame the
 * kernel accepts. */
int arch_frame_build(const struct arch_state *st, uint64_t sigmask, uint64_t hold_mask,
                     long reissue_nr, uint64_t tramp, struct arch_frame *f,
                     struct mp_error *err);
void arch_frame_free(struct arch_frame *f);
/* Would the frame of a thread stopped with registers r have it make a
 * system call it was not making itself (pause() waits as rt_sigsuspend)?
 * A seccomp filter may forbid that one: for a filtered thread the caller
 * passes tramp 0, and the frame re-issues the thread's own call instead
 * (it then waits on after a handler that ran while it was held). */
bool arch_frame_adds_syscall(const struct arch_regs *r);

/* Is the thread, in a syscall-entry stop with registers r, at the
 * trampoline's rt_sigreturn (tramp_end = trampoline + stop_offset)? */
bool arch_at_sigreturn_entry(const struct arch_regs *r, uint64_t tramp_end);
/* The called function's result, read at that stop. */
uint64_t arch_call_result(const struct arch_regs *r);
/* From that stop: registers that skip the system call now and enter it
 * again on return to user space (the thread still restores itself if let
 * go), so that an interrupt can stop it where an exact restore works. */
void arch_prepare_resigreturn(const struct arch_regs *at_entry, struct arch_regs *out);
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

/* perf_event_open's sample_regs_user mask for the page-fault sampler: the
 * frame pointer, stack pointer and program counter, whose numbers are in
 * that order on every CPU memprof knows (lib/proc/perf_record.h). */
uint64_t arch_perf_user_regs(void);

/* What interrupting a thread blocked in system call `nr` does to it. */
enum syscall_class {
    SYSCALL_RESTARTABLE,   /* restarts transparently: futex, read, poll, nanosleep... */
    SYSCALL_OTHER,         /* not known either way */
    SYSCALL_EINTR,         /* returns EINTR to the program: epoll_wait, rt_sigtimedwait... */
    SYSCALL_NEW_TASK,      /* clone, fork, vfork: stops only once the copy is made */
};
enum syscall_class arch_syscall_class(long nr);

#endif
