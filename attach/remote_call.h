/* remote_call.h - running functions on one thread of a live process while
 * its other threads keep running: pick a thread, seize and interrupt it,
 * check it is safe, save its state (also as a signal frame on its stack,
 * so that it restores itself if memprof dies), call, restore it exactly,
 * detach. */
#ifndef MEMPROF_REMOTE_CALL_H
#define MEMPROF_REMOTE_CALL_H

#include <signal.h>
#include <stdio.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "attach/arch/arch.h"
#include "attach/stop_priority.h"
#include "lib/base/error.h"
#include "lib/proc/maps.h"

/* A restart-block system call seen on a thread at a stop.  Once memprof
 * lets the thread go it continues the call through restart_syscall, and
 * only this remembers which call it was (see arch_frame_build). */
struct restart_memo {
    pid_t tid;                  /* 0: free */
    struct arch_syscall call;
};
#define RESTART_MEMO_SLOTS 32

#define REMOTE_TRAMP_MAX 24         /* bytes of the longest trampoline */

/* How long a call may take before memprof leaves it (seconds; target.c
 * takes MEMPROF_CALL_TIMEOUT from the environment). */
#define REMOTE_CALL_LIMIT_S 5.0

struct unwind_checker;

/* Long-lived per target. */
struct remote_ctx {
    pid_t pid;
    int mem_fd;                 /* /proc/PID/mem, for the trampoline */
    uint64_t tramp;             /* where the trampoline goes: ELF entry point */
    uint8_t tramp_orig[REMOTE_TRAMP_MAX]; /* the bytes to leave there: _start's
                                 * from the file, or a trampoline a dead memprof left */
    size_t tramp_len;           /* never changes, and every stop puts them back */
    struct unwind_checker *unwind;
    struct map_list maps;       /* cached for stack headroom; refreshed on miss */
    uint64_t region_hint;       /* where the last code region went (callback_region.c) */
    uint64_t region_hint_size;  /* and its size */
    FILE *trace;                /* one line per stop (MEMPROF_TRACE_PAUSES), or NULL */
    struct stop_priority prio;  /* memprof's own scheduling during a stop */
    bool cannot_suspend_seccomp; /* PTRACE_O_SUSPEND_SECCOMP refused (no CAP_SYS_ADMIN) */
    pid_t only_tid;             /* non-zero: the one thread a session may stop */
    struct restart_memo restart_memo[RESTART_MEMO_SLOTS];
    unsigned restart_memo_next; /* the slot a new thread takes */
    unsigned long long start_time; /* proc_start_time at attach, 0: unknown */
    double call_limit_s;        /* a call still running after this is left */
    int stop_signal;            /* terminal signal memprof got during a stop */
    /* Once set, no further call is made into the process in this session,
     * and this says why: a call faulted (an allocator lock may be held), a
     * thread was left inside a call, the process exec'd or exited. */
    char no_calls[1024];        /* as long as an mp_error message */
    /* A thread was left inside a call, or not let go: memprof must exit
     * (the kernel then detaches whatever it still traces). */
    bool must_exit;
};

/* One stopped thread. */
struct remote_stop {
    struct remote_ctx *ctx;
    pid_t tid;
    struct arch_state saved;
    uint64_t saved_sigmask;     /* kernel sigset of the thread */
    bool have_state, mask_changed, tramp_written;
    bool at_signal_stop;        /* in a signal-delivery-stop (a fault): a
                                 * detach there can inject a kept signal */
    bool at_sigreturn;          /* in the trampoline's rt_sigreturn entry stop */
    struct arch_regs at_regs;   /* the registers there */
    struct arch_frame frame;    /* the self-restore frame, written before any call */
    /* Signals the thread dequeued after memprof changed it (SIGSTOP, a
     * fault's number sent by kill): queued again with their own siginfo
     * when it is let go. */
    int pending_sig[8];
    siginfo_t pending_info[8];
    size_t npending;
    bool gone;                  /* the thread or process died */
    bool reaped;                /* its exit was waited for */
    bool let_go;                /* detached already: nothing left to undo */
    uint64_t stack_low;         /* lowest usable address of its stack */
    unsigned ncalls;            /* remote calls made in this stop */
    int64_t stopped_ns;         /* CLOCK_MONOTONIC at the interrupt stop */
};

/* The body of a session: make calls with remote_stop_call. */
typedef int (*remote_body_fn)(struct remote_stop *s, void *arg, struct mp_error *err);

struct remote_report {
    double pause_us;            /* from PTRACE_INTERRUPT to detach */
    pid_t tid;
    unsigned unsafe_retries;
};

/* tramp: where the trampoline goes; tramp_orig: the bytes to leave there
 * between stops (the executable file's, or a trampoline a dead memprof
 * left, which must stay). */
int remote_ctx_init(struct remote_ctx *ctx, pid_t pid, uint64_t tramp,
                    const uint8_t *tramp_orig, struct unwind_checker *unwind,
                    struct mp_error *err);
void remote_ctx_fini(struct remote_ctx *ctx);

/* Choose a safe thread, run body on it, let it go.  Returns body's result,
 * or -1 when no thread could be used or the process died.
 *
 * Every wait is bounded.  memprof's terminal signals (INT, TERM, HUP,
 * QUIT) and SIGCHLD stay blocked during a stop and wake its waits; one
 * that arrives is raised again once the thread is let go (or left), so it
 * acts then.  A call still running after ctx->call_limit_s, or when a
 * terminal signal comes, is left: the thread is detached inside it and
 * restores itself when it returns (the trampoline stays for that), and
 * ctx->must_exit is set. */
int remote_session(struct remote_ctx *ctx, remote_body_fn body, void *arg,
                   struct remote_report *rep, struct mp_error *err);

/* Scratch space of `size` bytes on the stopped thread's stack, below its
 * red zone; *sp is the stack pointer to call with (just below it). */
int remote_stop_scratch(struct remote_stop *s, size_t size, uint64_t *addr,
                        uint64_t *sp, struct mp_error *err);

/* fn(args...) on the stopped thread with stack pointer sp. */
int remote_stop_call(struct remote_stop *s, uint64_t fn, const uint64_t *args,
                     size_t nargs, uint64_t sp, uint64_t *ret, struct mp_error *err);
/* The same for a call that needs no memory of its own: its stack starts
 * just below the thread's red zone. */
int remote_stop_call_plain(struct remote_stop *s, uint64_t fn, const uint64_t *args,
                           size_t nargs, uint64_t *ret, struct mp_error *err);

/* Read or write the program memprof attached to, during a stop (through
 * ctx->mem_fd: never a program the process exec'd since; err then says
 * that the process exec'd or exited). */
int remote_stop_read(struct remote_stop *s, uint64_t addr, void *buf, size_t len,
                     struct mp_error *err);
int remote_stop_write(struct remote_stop *s, uint64_t addr, const void *buf, size_t len,
                      struct mp_error *err);

/* The rseq rule: is ip inside the critical section that starts at start_ip
 * and commits at start_ip + post_commit_offset (end excluded)?  A thread
 * stopped there must not be moved: the kernel would drop its section
 * without the abort the section relies on. */
bool remote_rseq_ip_inside(uint64_t ip, uint64_t start_ip, uint64_t post_commit_offset);

/* The signal-mask rule: what a hijacked thread blocks during the call
 * (everything but the synchronous, forced signals). */
uint64_t remote_call_sigmask(uint64_t saved);

/* The held-time rule for a restarted select/pselect6/ppoll (see
 * arch_restart_timeout): the timeout left, sec + sub / sub_per_sec, less
 * held_ns, never below zero.  false when the value is not a valid timeout
 * (left as it is: the kernel refuses it). */
bool remote_timeout_less(int64_t *sec, int64_t *sub, int64_t sub_per_sec, int64_t held_ns);

/* The system call number the self-restore frame of thread tid, stopped
 * with regs, re-issues (arch_frame_build's reissue_nr); remembers the
 * call for later stops of the thread. */
long remote_reissue_nr(struct remote_ctx *ctx, pid_t tid, const struct arch_regs *regs);

#endif
