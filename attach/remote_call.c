/* remote_call.c - the generic remote-call sequence (FIELD-NOTES §3):
 * PTRACE_SEIZE one thread, PTRACE_INTERRUPT, wait with __WALL, let any
 * signal it dequeued meanwhile go on to it (nothing is changed yet), save
 * registers, xstate and signal mask (on arm64, for a call the kernel may
 * continue through restart_syscall, first run it to that system call's
 * entry stop to read the kernel's decision: reveal_restart),
 * refuse it inside an rseq critical section or with a frame in the
 * allocator/loader/unwinder, write a signal frame of its saved state below
 * its red zone, block its asynchronous signals, call through a trampoline
 * at the ELF entry point that ends in rt_sigreturn on that frame, take the
 * thread back at that syscall's entry stop (PTRACE_SYSCALL), restore all
 * of it exactly from an interrupt stop, queue again with its own siginfo
 * any signal it dequeued during the call, detach.
 *
 * memprof blocks its terminal signals for the whole stop and waits for
 * them together with the thread's stops, every wait with a deadline.
 * Should it die (SIGKILL) at any point after the redirect, or leave a call
 * that does not return, the thread runs its rt_sigreturn once free: it
 * restores itself (FIELD-NOTES §3 rule 11).  Only the trampoline bytes
 * then stay at the entry point: dead code, since _start never runs again.
 * A thread that dies is reaped at once, and one that exec's is let go
 * untouched: nothing is written into a new program. */
#include "attach/remote_call.h"
#include "attach/fault_signals.h"
#include "attach/preflight.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "attach/memory.h"
#include "attach/proc_fate.h"
#include "attach/threads.h"
#include "attach/lock_wait.h"
#include "attach/unwind_check.h"

#ifndef PTRACE_GET_RSEQ_CONFIGURATION
#define PTRACE_GET_RSEQ_CONFIGURATION 0x420f
#endif

#define MAX_ROUNDS 100          /* rounds of candidates before giving up */
#define ROUND_SLEEP_NS 2000000  /* let refused threads leave the allocator */
#define MIN_HEADROOM (64 * 1024) /* stack mallctl may use below the scratch */
/* Stops that come at once (an interrupt, the rt_sigreturn re-entry, a
 * dying thread's exit) are given this long, generously for a loaded
 * machine; after memprof got a terminal signal, SIGNALLED_WAIT_S. */
#define STOP_WAIT_S 5.0
#define SIGNALLED_WAIT_S 0.5

/* STOP_GONE also covers an exec (the thread is let go at once, see
 * let_go_exec); STOP_TIMEOUT: the deadline passed; STOP_TERMINAL: a
 * terminal signal ended a call's wait. */
enum stop_kind { STOP_GONE, STOP_INTERRUPT, STOP_GROUP, STOP_SIGNAL, STOP_SYSCALL,
                 STOP_OTHER, STOP_TIMEOUT, STOP_TERMINAL };

/* TRY_TRACED: the thread has another tracer (strace -p TID): another
 * thread is tried, and only when none is left is the session refused. */
enum try_result { TRY_DONE, TRY_UNSAFE, TRY_THREAD_GONE, TRY_TRACED, TRY_FAILED };

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

uint64_t remote_call_sigmask(uint64_t saved)
{
    /* Blocking a forced synchronous signal makes the kernel reset its
     * handler to SIG_DFL process-wide: these stay deliverable, unless the
     * thread blocks them itself.  Unblocked there, the thread would take
     * a kill()-sent one meant for the process, and memprof could only give
     * it back to this thread, which blocks it: for the program, lost. */
    return ~(fault_signals_mask() & ~saved);
}

int remote_ctx_init(struct remote_ctx *ctx, pid_t pid, uint64_t tramp,
                    const uint8_t *tramp_orig, struct unwind_checker *unwind,
                    struct mp_error *err)
{
    memset(ctx, 0, sizeof *ctx);
    ctx->pid = pid;
    ctx->tramp = tramp;
    ctx->unwind = unwind;
    ctx->call_limit_s = REMOTE_CALL_LIMIT_S;
    char path[96];
    threads_proc_dir(pid, path, sizeof path - 4);
    strcat(path, "/mem");
    /* /proc/PID/mem can write read-only text, process_vm_writev cannot.
     * The open file reaches the process's memory for as long as the
     * process lives, even after the thread it was opened through exits. */
    ctx->mem_fd = open(path, O_RDWR | O_CLOEXEC);
    if (ctx->mem_fd < 0 && errno == EACCES && geteuid() == 0) {
        /* The file is the process's user's, mode 0600: root passes only
         * with CAP_DAC_OVERRIDE (CAP_DAC_READ_SEARCH does not write). */
        char fix[256];
        return mp_error_set(err, "cannot open %s: %s: it belongs to the process's user, "
                            "and %s", path, strerror(errno),
                            preflight_root_lacks("DAC_OVERRIDE", fix, sizeof fix));
    }
    if (ctx->mem_fd < 0)
        return mp_error_set(err, "cannot open %s: %s (run memprof as root)", path,
                            strerror(errno));
    size_t stop_off;
    arch_trampoline(&ctx->tramp_len, &stop_off);
    memcpy(ctx->tramp_orig, tramp_orig, ctx->tramp_len);
    if (maps_read_pid(pid, &ctx->maps, err) < 0) {
        remote_ctx_fini(ctx);
        return -1;
    }
    return 0;
}

void remote_ctx_fini(struct remote_ctx *ctx)
{
    if (ctx->mem_fd >= 0)
        close(ctx->mem_fd);
    ctx->mem_fd = -1;
    maps_free(&ctx->maps);
}

static bool thread_seccomp_filtered(pid_t pid, pid_t tid);

/* ---- stops ---------------------------------------------------------- */

/* memprof's signals that end it: they stay blocked during a stop, wake
 * its waits, and are raised again once the thread is let go.  One that
 * memprof ignores (nohup, a background job's SIGINT) is left alone. */
static const int terminal_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };

static void wait_signals(sigset_t *set, bool with_sigchld)
{
    sigemptyset(set);
    for (size_t i = 0; i < sizeof terminal_signals / sizeof terminal_signals[0]; i++) {
        struct sigaction sa;
        if (sigaction(terminal_signals[i], NULL, &sa) == 0 && sa.sa_handler == SIG_IGN)
            continue;
        sigaddset(set, terminal_signals[i]);
    }
    if (with_sigchld)
        sigaddset(set, SIGCHLD);
}

static double now_s(void)
{
    return now_us() / 1e6;
}

/* Note a terminal signal that is pending (blocked) without waiting. */
static void poll_terminal_signal(struct remote_ctx *ctx)
{
    sigset_t set;
    wait_signals(&set, false);
    struct timespec zero = { 0, 0 };
    int sig = sigtimedwait(&set, NULL, &zero);
    if (sig > 0 && !ctx->stop_signal)
        ctx->stop_signal = sig;
}

/* What became of the process, as an error (0 while it runs the same
 * program); then no further call is made into it.  settle: after a
 * thread died, give an exec under way time to show (proc_fate_settled). */
static int fate_error(struct remote_ctx *ctx, const char *when, bool settle,
                      struct mp_error *err)
{
    enum proc_fate fate = settle ? proc_fate_settled(ctx->pid, ctx->mem_fd, ctx->start_time,
                                                     STOP_WAIT_S)
                                 : proc_fate(ctx->pid, ctx->mem_fd, ctx->start_time);
    if (fate == PROC_SAME)
        return 0;
    proc_fate_error(ctx->pid, fate, when, err);
    snprintf(ctx->no_calls, sizeof ctx->no_calls, "%s", err->msg);
    return -1;
}

/* The thread exec'd (PTRACE_EVENT_EXEC): its old program is gone, so
 * nothing is restored, no byte written; only the signal mask, which
 * survives an exec, is put back.  It runs on untraced. */
static void let_go_exec(struct remote_stop *s)
{
    if (s->mask_changed)
        ptrace(PTRACE_SETSIGMASK, s->tid, sizeof s->saved_sigmask, &s->saved_sigmask);
    ptrace(PTRACE_DETACH, s->tid, 0, 0);
    s->gone = s->reaped = s->let_go = true;
    s->tramp_written = false;
}

static enum stop_kind decode_stop(struct remote_stop *s, int st, int *sig)
{
    if (WIFEXITED(st) || WIFSIGNALED(st)) {
        s->reaped = true;
        return STOP_GONE;
    }
    *sig = WSTOPSIG(st);
    int event = st >> 16;
    if (event == PTRACE_EVENT_EXEC) {
        let_go_exec(s);
        return STOP_GONE;
    }
    if (event == PTRACE_EVENT_STOP)
        return *sig == SIGTRAP ? STOP_INTERRUPT : STOP_GROUP;
    if (event == 0 && *sig == (SIGTRAP | 0x80))   /* PTRACE_O_TRACESYSGOOD */
        return STOP_SYSCALL;
    return event == 0 ? STOP_SIGNAL : STOP_OTHER;
}

/* The next stop of the thread, waited for until `deadline` (now_s()
 * time): STOP_TIMEOUT past it.  A terminal signal is noted in the
 * context; it ends a call's wait at once (STOP_TERMINAL), and cuts any
 * other wait, for a stop that should come at once, to SIGNALLED_WAIT_S. */
static enum stop_kind wait_stop(struct remote_stop *s, int *sig, double deadline, bool call)
{
    sigset_t set;
    wait_signals(&set, true);
    if (s->ctx->stop_signal && !call && deadline > now_s() + SIGNALLED_WAIT_S)
        deadline = now_s() + SIGNALLED_WAIT_S;
    for (;;) {
        int st;
        pid_t r = waitpid(s->tid, &st, __WALL | WNOHANG);
        if (r == s->tid)
            return decode_stop(s, st, sig);
        if (r < 0 && errno != EINTR) {
            /* Not our tracee under that tid any more: reaped, or it is
             * exec'ing and took the leader's tid (ptrace(2), "execve(2)
             * under ptrace"). */
            pid_t pid = s->ctx->pid;
            if (s->tid == pid)
                return s->reaped = true, STOP_GONE;
            r = waitpid(pid, &st, __WALL | WNOHANG);
            if (r < 0)
                return s->reaped = true, STOP_GONE;
            s->tid = pid;
            if (r == pid)
                return decode_stop(s, st, sig);
        }
        double left = deadline - now_s();
        if (left <= 0)
            return STOP_TIMEOUT;
        /* A slice, should a SIGCHLD ever be missed. */
        if (left > 0.1)
            left = 0.1;
        struct timespec ts = { 0, (long)(left * 1e9) };
        int got = sigtimedwait(&set, NULL, &ts);
        if (got > 0 && got != SIGCHLD) {
            if (!s->ctx->stop_signal)
                s->ctx->stop_signal = got;
            if (call)
                return STOP_TERMINAL;
            if (deadline > now_s() + SIGNALLED_WAIT_S)
                deadline = now_s() + SIGNALLED_WAIT_S;
        }
    }
}

/* A traced thread that died is waited for before anything else is traced:
 * an exec in another thread waits, holding the lock PTRACE_SEIZE takes,
 * until every dead thread of the process is reaped, and a dead thread
 * memprof traces is reaped by memprof alone. */
static void reap(struct remote_stop *s)
{
    double deadline = now_s() + STOP_WAIT_S;
    while (!s->reaped) {
        int sig = 0;
        enum stop_kind k = wait_stop(s, &sig, deadline, false);
        if (k == STOP_GONE)
            break;
        if (k == STOP_TIMEOUT) {
            /* Still traced and neither stopping nor dying: only memprof's
             * exit lets the kernel release it. */
            s->ctx->must_exit = true;
            break;
        }
        /* Stopped, so alive after all: untraced, it goes on. */
        if (ptrace(PTRACE_DETACH, s->tid, 0, 0) == 0) {
            s->let_go = true;
            break;
        }
    }
    s->gone = true;
}

/* After a ptrace request failed: did the thread die (SIGKILL, an exec in
 * another thread)?  A stopped tracee answers any request, a dead one ESRCH. */
static bool thread_died(struct remote_stop *s)
{
    uint64_t mask;
    return ptrace(PTRACE_GETSIGMASK, s->tid, sizeof mask, &mask) < 0 && errno == ESRCH;
}

static int gone_error(struct remote_stop *s, struct mp_error *err)
{
    reap(s);
    if (fate_error(s->ctx, "during the call", true, err) < 0)
        return -1;
    return mp_error_set(err, "thread %d of process %d exited during the call",
                        s->tid, s->ctx->pid);
}

/* A kept signal's last way back, when no exact one is left (the thread
 * is gone from under the stop, or the table is full): the kernel refuses
 * to let rt_tgsigqueueinfo forge SI_USER or a kernel code, and tgkill
 * then names memprof as the sender.  SIGSTOP has no handler to see that. */
static void requeue_signal(pid_t pid, pid_t tid, int sig, siginfo_t *info)
{
    if (syscall(SYS_rt_tgsigqueueinfo, pid, tid, sig, info) < 0)
        syscall(SYS_tgkill, pid, tid, sig);
}

/* Keep a signal the thread dequeued after memprof changed its state, to
 * give it back with its own siginfo at release (requeue_kept).  A
 * standard signal already kept merges with it, as two pending instances
 * do in the kernel (for the program it is still pending).  Past the
 * table's room it goes straight back to the thread's queue (never lost).
 * The caller suppresses it. */
static void keep_signal(struct remote_stop *s, int sig)
{
    for (size_t i = 0; i < s->npending && sig < 32; i++)   /* 32..64 queue */
        if (s->pending_sig[i] == sig)
            return;
    siginfo_t info;
    memset(&info, 0, sizeof info);
    if (ptrace(PTRACE_GETSIGINFO, s->tid, 0, &info) < 0) {
        info.si_signo = sig;
        info.si_code = SI_TKILL;
    }
    if (s->npending == sizeof s->pending_sig / sizeof s->pending_sig[0]) {
        requeue_signal(s->ctx->pid, s->tid, sig, &info);
        return;
    }
    s->pending_info[s->npending] = info;
    s->pending_sig[s->npending++] = sig;
}

/* Wait for the interrupt's PTRACE_EVENT_STOP.  A signal-delivery-stop may
 * come first (the thread had dequeued it before the interrupt): with
 * `deliver` (memprof has changed nothing yet) the signal goes on to the
 * thread right there, with its own siginfo, exactly as without memprof,
 * and the pending interrupt then traps at its handler's entry (or wherever
 * its default action leaves it); else it is kept and suppressed, and the
 * interrupt traps before the thread returns to user space.  SIGSTOP is
 * always kept: no handler can see its siginfo, and the process stops once
 * memprof is done rather than under it.  Returns 0, 1 when the process is
 * group-stopped (not ours to run code in), -1 when gone, -2 when the
 * thread did not stop by the deadline. */
static int wait_interrupt(struct remote_stop *s, double deadline, bool deliver)
{
    for (;;) {
        int sig = 0, pass = 0;
        switch (wait_stop(s, &sig, deadline, false)) {
        case STOP_INTERRUPT:
            return 0;
        case STOP_GROUP:
            return 1;
        case STOP_GONE:
            s->gone = true;
            return -1;
        case STOP_TIMEOUT:
        case STOP_TERMINAL:
            return -2;
        case STOP_SIGNAL:
            if (deliver && sig != SIGSTOP)
                pass = sig;
            else
                keep_signal(s, sig);
            break;
        case STOP_SYSCALL:
        case STOP_OTHER:
            break;
        }
        if (ptrace(PTRACE_CONT, s->tid, 0, (void *)(long)pass) < 0) {
            s->gone = true;
            return -1;
        }
    }
}

/* ---- safety checks on the stopped thread ------------------------------ */

struct rseq_config {
    uint64_t rseq_abi_pointer;
    uint32_t rseq_abi_size, signature, flags, pad;
};

struct rseq_cs_desc {
    uint32_t version, flags;
    uint64_t start_ip, post_commit_offset, abort_ip;
};

bool remote_rseq_ip_inside(uint64_t ip, uint64_t start_ip, uint64_t post_commit_offset)
{
    /* Unsigned difference: an ip below start_ip wraps to a huge value. */
    return ip >= start_ip && ip - start_ip < post_commit_offset;
}

/* 1 when the thread stands inside a registered rseq critical section:
 * moving its IP away would make the kernel drop the section silently. */
static int in_rseq_section(struct remote_stop *s, uint64_t ip)
{
    struct rseq_config conf = { 0 };
    if (ptrace(PTRACE_GET_RSEQ_CONFIGURATION, s->tid, sizeof conf, &conf) <= 0 ||
        !conf.rseq_abi_pointer)
        return 0;
    uint64_t cs_ptr;
    struct mp_error ignored;
    if (remote_read(s->ctx->pid, conf.rseq_abi_pointer + 8, &cs_ptr, sizeof cs_ptr,
                    &ignored) < 0 || !cs_ptr)
        return 0;
    struct rseq_cs_desc cs;
    if (remote_read(s->ctx->pid, cs_ptr, &cs, sizeof cs, &ignored) < 0)
        return 1;   /* cannot tell: be safe */
    return remote_rseq_ip_inside(ip, cs.start_ip, cs.post_commit_offset);
}

static const struct map_entry *stack_mapping(struct remote_ctx *ctx, uint64_t sp)
{
    /* The map read before this session's stops first (not inside the
     * stop: a process with thousands of mappings takes milliseconds). */
    const struct map_entry *e = ctx->unwind ? maps_find(unwind_checker_maps(ctx->unwind), sp)
                                            : NULL;
    if (e || (e = maps_find(&ctx->maps, sp)))
        return e;
    /* A thread created since the last read: its stack is new. */
    struct mp_error ignored;
    struct map_list fresh = { 0 };
    if (maps_read_pid(ctx->pid, &fresh, &ignored) < 0)
        return NULL;
    maps_free(&ctx->maps);
    ctx->maps = fresh;
    return maps_find(&ctx->maps, sp);
}

static int check_stack(struct remote_stop *s, char *why, size_t whylen)
{
    uint64_t sp = arch_sp(&s->saved.regs);
    const struct map_entry *e = stack_mapping(s->ctx, sp);
    if (!e || !e->w) {
        snprintf(why, whylen, "its stack pointer %#llx is not in writable memory",
                 (unsigned long long)sp);
        return 1;
    }
    s->stack_low = e->start;
    /* The main stack grows on demand; a thread stack ends at its guard page. */
    if (strcmp(e->path, "[stack]") != 0 && sp - e->start < MIN_HEADROOM + arch_red_zone()) {
        snprintf(why, whylen, "only %llu bytes of stack left",
                 (unsigned long long)(sp - e->start));
        return 1;
    }
    if (strcmp(e->path, "[stack]") == 0)
        s->stack_low = 0;
    return 0;
}

/* 0 safe, 1 unsafe (why set). */
static int check_thread(struct remote_stop *s, char *why, size_t whylen)
{
    if (in_rseq_section(s, arch_ip(&s->saved.regs))) {
        snprintf(why, whylen, "inside an rseq critical section");
        return 1;
    }
    if (check_stack(s, why, whylen))
        return 1;
    return unwind_check_thread(s->ctx->unwind, s->tid, &s->saved.regs, why, whylen) != 0;
}

/* ---- the call ---------------------------------------------------------- */

int remote_stop_scratch(struct remote_stop *s, size_t size, uint64_t *addr,
                        uint64_t *sp, struct mp_error *err)
{
    /* Below the self-restore frame, which stays put for the whole stop. */
    uint64_t call_sp = arch_call_sp(s->frame.low, size);
    if (s->stack_low && call_sp - s->stack_low < MIN_HEADROOM)
        return mp_error_set(err, "thread %d has too little stack for %zu bytes of "
                            "arguments", s->tid, size);
    *addr = call_sp;
    *sp = call_sp;
    return 0;
}

/* Reads and writes during a stop go through /proc/PID/mem opened at
 * attach: tied to the program memprof attached to, they never reach one
 * the process exec'd meanwhile (they move nothing then, and say why). */
int remote_stop_write(struct remote_stop *s, uint64_t addr, const void *buf, size_t len,
                      struct mp_error *err)
{
    ssize_t n = pwrite(s->ctx->mem_fd, buf, len, (off_t)addr);
    if (n == (ssize_t)len)
        return 0;
    int e = errno;
    if (fate_error(s->ctx, "while memprof held one of its threads", true, err) < 0)
        return -1;
    return mp_error_set(err, "cannot write %zu bytes at %#llx in process %d: %s", len,
                        (unsigned long long)addr, s->ctx->pid,
                        n < 0 ? strerror(e) : "only part was written");
}

int remote_stop_read(struct remote_stop *s, uint64_t addr, void *buf, size_t len,
                     struct mp_error *err)
{
    ssize_t n = pread(s->ctx->mem_fd, buf, len, (off_t)addr);
    if (n == (ssize_t)len)
        return 0;
    int e = errno;
    if (fate_error(s->ctx, "while memprof held one of its threads", true, err) < 0)
        return -1;
    return mp_error_set(err, "cannot read %zu bytes at %#llx in process %d: %s", len,
                        (unsigned long long)addr, s->ctx->pid,
                        n < 0 ? strerror(e) : "only part was read");
}

static int write_trampoline(struct remote_stop *s, struct mp_error *err)
{
    size_t len, stop_off;
    const uint8_t *code = arch_trampoline(&len, &stop_off);
    /* Marked first: a partial write must be undone too. */
    s->tramp_written = true;
    if (remote_stop_write(s, s->ctx->tramp, code, len, err) < 0)
        return mp_error_prefix(err, "cannot write the call trampoline");
    return 0;
}

/* A fault of the call itself: a synchronous signal the kernel raised.  The
 * same numbers sent by kill() or tgkill (si_code <= 0) are the program's,
 * kept like any other. */
static bool is_fault(pid_t tid, int sig)
{
    if (!fault_signal(sig))
        return false;
    siginfo_t info;
    return ptrace(PTRACE_GETSIGINFO, tid, 0, &info) < 0 || info.si_code > 0;
}

/* From now on no call is made into the process in this session; the
 * first reason given is the one kept. */
static void refuse_calls(struct remote_ctx *ctx, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void refuse_calls(struct remote_ctx *ctx, const char *fmt, ...)
{
    if (ctx->no_calls[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx->no_calls, sizeof ctx->no_calls, fmt, ap);
    va_end(ap);
}

/* A call that faults inside the allocator leaves it in an unknown state:
 * a lock it took stays held by the thread, and the next call that needs
 * it waits for good.  The thread's registers and mask are put back on
 * release; the process is not called into again. */
static int call_faulted(struct remote_stop *s, int sig, const struct arch_regs *r,
                        struct mp_error *err)
{
    struct remote_ctx *ctx = s->ctx;
    refuse_calls(ctx, "a call faulted (signal %d, %s) in thread %d of process %d, so "
                 "its allocator may hold a lock that thread %d took and will never "
                 "release: memprof makes no further call into it in this session",
                 sig, strsignal(sig), s->tid, ctx->pid, s->tid);
    return mp_error_set(err, "the call faulted with signal %d (%s) at %#llx in thread "
                        "%d; memprof put the thread's registers and signal mask back, "
                        "but an allocator lock may now be held by thread %d: later "
                        "allocations in process %d may hang.  memprof makes no "
                        "further call into it in this session (detach is safe); plan "
                        "to restart the process", sig, strsignal(sig),
                        (unsigned long long)arch_ip(r), s->tid, s->tid, ctx->pid);
}

static void read_small(const char *path, char *buf, size_t len)
{
    buf[0] = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = read(fd, buf, len - 1);
    close(fd);
    buf[n > 0 ? n : 0] = 0;
    buf[strcspn(buf, "\n")] = 0;
}

/* What a thread that does not come back waits on, for a person: its
 * kernel wait channel and system call. */
static void describe_wait(pid_t pid, pid_t tid, char *buf, size_t len)
{
    char path[96], wchan[64], call[32];
    snprintf(path, sizeof path, "/proc/%d/task/%d/wchan", pid, tid);
    read_small(path, wchan, sizeof wchan);
    snprintf(path, sizeof path, "/proc/%d/task/%d/syscall", pid, tid);
    read_small(path, call, sizeof call);
    call[strcspn(call, " ")] = 0;
    bool in_call = call[0] >= '0' && call[0] <= '9';
    if (wchan[0] && strcmp(wchan, "0") != 0)
        snprintf(buf, len, "blocked in %s%s%s%s", wchan, in_call ? " (system call " : "",
                 in_call ? call : "", in_call ? ")" : "");
    else if (in_call)
        snprintf(buf, len, "blocked in system call %s", call);
    else
        snprintf(buf, len, "running, in no system call");
}

/* Detach a traced thread that runs, changing nothing: stop it first (any
 * stop will do: the syscall-exit stop of an interrupted wait comes first
 * and takes the interrupt's place; at a signal-delivery-stop the detach
 * delivers the signal).  0 detached, or not stopped in time (then only
 * memprof's exit releases it: ctx->must_exit); -1 when it died. */
static int detach_running(struct remote_stop *s)
{
    int sig = 0;
    enum stop_kind k = ptrace(PTRACE_INTERRUPT, s->tid, 0, 0) < 0 ? STOP_GONE
                           : wait_stop(s, &sig, now_s() + SIGNALLED_WAIT_S, false);
    if (k == STOP_GONE)
        return -1;
    if (k == STOP_TIMEOUT) {
        s->ctx->must_exit = true;
        return 0;
    }
    ptrace(PTRACE_DETACH, s->tid, 0, (void *)(long)(k == STOP_SIGNAL ? sig : 0));
    for (size_t i = 0; i < s->npending; i++)
        requeue_signal(s->ctx->pid, s->tid, s->pending_sig[i], &s->pending_info[i]);
    s->npending = 0;
    return 0;
}

/* The call has not returned in time, or memprof must end: let the thread
 * go inside the call.  Its registers already lead it, when the call
 * returns, into the trampoline's rt_sigreturn on its self-restore frame,
 * which puts back all of it; the trampoline bytes stay for that.  An
 * interrupt first stops it where it waits (a blocking system call
 * returns -ERESTART* and is re-entered), so that it can be detached. */
static int leave_call(struct remote_stop *s, double elapsed, struct mp_error *err)
{
    struct remote_ctx *ctx = s->ctx;
    char waits[200], why[120], lock[160] = "";
    describe_wait(ctx->pid, s->tid, waits, sizeof waits);
    uint64_t word = 0;
    pid_t owner = lock_wait_owner(ctx->pid, s->tid, &word);
    if (owner == s->tid)
        snprintf(lock, sizeof lock, ", on a lock (mutex at %#llx) that it holds itself",
                 (unsigned long long)word);
    else if (owner)
        snprintf(lock, sizeof lock, ", on a lock (mutex at %#llx) that thread %d holds",
                 (unsigned long long)word, owner);
    if (ctx->stop_signal)
        snprintf(why, sizeof why, "memprof got SIG%s %.1f s into the call",
                 sigabbrev_np(ctx->stop_signal), elapsed);
    else
        snprintf(why, sizeof why, "the call has not returned after %.1f s", elapsed);
    ctx->must_exit = true;
    refuse_calls(ctx, "a call was left running in thread %d of process %d (%s): memprof "
                 "makes no further call in this session", s->tid, ctx->pid,
                 owner == s->tid ? "waiting on a lock it holds itself, for good"
                                 : "it restores itself when the call returns");
    if (detach_running(s) < 0)
        return gone_error(s, err);
    /* Detached, or (not stopped) released by the kernel when memprof exits. */
    s->let_go = true;
    s->tramp_written = false;
    if (owner == s->tid)
        return mp_error_set(err, "%s: thread %d is %s%s, which only it can release: the "
                            "call will never return, and every thread of process %d that "
                            "needs that lock will wait for good.  memprof left the call and "
                            "makes no further call into the process in this session.  "
                            "Restart process %d (no tool can release the lock)", why,
                            s->tid, waits, lock, ctx->pid, ctx->pid);
    return mp_error_set(err, "%s: thread %d is %s%s.  memprof left the call: the thread "
                        "restores itself (registers, signal mask, interrupted system "
                        "call) as soon as the call returns, and the call's code stays "
                        "at process %d's entry point for that.  No further call is "
                        "made into the process in this session%s", why, s->tid, waits,
                        lock, ctx->pid, ctx->stop_signal ? "" :
                        " (MEMPROF_CALL_TIMEOUT=SECONDS allows calls more time)");
}

/* Run until the trampoline's rt_sigreturn entry stop.  The thread's own
 * system calls inside the call (prof.dump opens and writes a file) stop at
 * entry and exit too: they are just resumed.  Signals that still reach the
 * thread (SIGSTOP, SIGKILL's death) are kept or reported; group-stops are
 * let through (the kernel re-stops the thread when memprof detaches). */
static int run_to_sigreturn(struct remote_stop *s, uint64_t stop_ip, struct arch_regs *r,
                            struct mp_error *err)
{
    double start = now_s();
    for (;;) {
        s->at_signal_stop = false;
        if (ptrace(PTRACE_SYSCALL, s->tid, 0, 0) < 0)
            return gone_error(s, err);
        int sig = 0;
        enum stop_kind k = wait_stop(s, &sig, start + s->ctx->call_limit_s, true);
        if (k == STOP_GONE)
            return gone_error(s, err);
        if (k == STOP_TIMEOUT || k == STOP_TERMINAL)
            return leave_call(s, now_s() - start, err);
        if (k != STOP_SIGNAL && k != STOP_SYSCALL)
            continue;
        if (arch_get_regs(s->tid, r, err) < 0)
            return gone_error(s, err);
        if (k == STOP_SYSCALL) {
            if (arch_at_sigreturn_entry(r, stop_ip)) {
                s->at_sigreturn = true;
                s->at_regs = *r;
                return 0;
            }
            continue;
        }
        s->at_signal_stop = true;
        if (is_fault(s->tid, sig))
            return call_faulted(s, sig, r, err);
        keep_signal(s, sig);
    }
}

static int set_sigmask(pid_t tid, uint64_t mask)
{
    return (int)ptrace(PTRACE_SETSIGMASK, tid, sizeof mask, &mask);
}

/* The call's signal mask, set once the thread's registers point at the
 * trampoline: from then on a memprof that dies leaves a thread that puts
 * its own mask back (rt_sigreturn), never one detached with this mask. */
static int block_signals(struct remote_stop *s, struct mp_error *err)
{
    uint64_t call_mask = remote_call_sigmask(s->saved_sigmask);
    if (set_sigmask(s->tid, call_mask) < 0) {
        mp_error_set(err, "cannot block signals of thread %d: %s", s->tid, strerror(errno));
        /* an exec in another thread kills this one: say what happened */
        return thread_died(s) ? gone_error(s, err) : -1;
    }
    s->mask_changed = true;
    return 0;
}

int remote_stop_call_plain(struct remote_stop *s, uint64_t fn, const uint64_t *args,
                           size_t nargs, uint64_t *ret, struct mp_error *err)
{
    uint64_t base = 0, sp = 0;
    if (remote_stop_scratch(s, 16, &base, &sp, err) < 0)
        return -1;
    return remote_stop_call(s, fn, args, nargs, sp, ret, err);
}

int remote_stop_call(struct remote_stop *s, uint64_t fn, const uint64_t *args,
                     size_t nargs, uint64_t sp, uint64_t *ret, struct mp_error *err)
{
    poll_terminal_signal(s->ctx);
    if (s->ctx->stop_signal)
        return mp_error_set(err, "memprof got SIG%s: no call was made",
                            sigabbrev_np(s->ctx->stop_signal));
    if (!s->tramp_written && write_trampoline(s, err) < 0)
        return -1;
    size_t len, stop_off;
    arch_trampoline(&len, &stop_off);
    struct arch_regs r;
    /* From the previous call's rt_sigreturn entry stop too: orig_rax = -1
     * skips that system call, the frame stays where it is. */
    arch_prepare_call(&s->saved.regs, &r, s->ctx->tramp, fn, sp, s->frame.sigreturn_sp,
                      args, nargs);
    if (arch_set_regs(s->tid, &r, err) < 0)
        return gone_error(s, err);
    if (!s->mask_changed && block_signals(s, err) < 0)
        return -1;
    s->at_sigreturn = false;
    s->ncalls++;
    if (run_to_sigreturn(s, s->ctx->tramp + stop_off, &r, err) < 0)
        return -1;
    *ret = arch_call_result(&r);
    return 0;
}

/* From the rt_sigreturn entry stop to an interrupt (or group-stop) stop:
 * only there does an exact restore of orig_rax/rax make the kernel restart
 * the interrupted system call itself, with its restart block (which
 * rt_sigreturn would reset: a nanosleep would end early with EINTR) and
 * with restart-or-EINTR decided by the handler of any signal pending.  The
 * rt_sigreturn is skipped but re-entered on return to user space, so the
 * thread still restores itself if memprof dies in between. */
static int leave_sigreturn(struct remote_stop *s, struct mp_error *err)
{
    struct arch_regs r;
    arch_prepare_resigreturn(&s->at_regs, &r);
    if (arch_set_regs(s->tid, &r, err) < 0 || ptrace(PTRACE_INTERRUPT, s->tid, 0, 0) < 0 ||
        ptrace(PTRACE_CONT, s->tid, 0, 0) < 0)
        return gone_error(s, err);
    s->at_sigreturn = false;
    int w = wait_interrupt(s, now_s() + STOP_WAIT_S, false);
    if (w == -1)
        return gone_error(s, err);
    if (w == -2) {
        /* It runs its rt_sigreturn, restoring itself; it needs the
         * trampoline's bytes, and memprof's exit to be untraced. */
        s->ctx->must_exit = true;
        refuse_calls(s->ctx, "thread %d of process %d did not stop after its last call "
                     "and was left to restore itself", s->tid, s->ctx->pid);
        s->let_go = true;
        s->tramp_written = false;
        return mp_error_set(err, "thread %d did not stop after the call: it restores "
                            "itself, and memprof must exit to let it go", s->tid);
    }
    return 0;
}

/* ---- letting go --------------------------------------------------------- */

static uint64_t sigbit(int sig)
{
    return (uint64_t)1 << (sig - 1);
}

/* Put kept signal `sig` back in the thread's queue with its own siginfo,
 * from an interrupt stop.  A signal-delivery-stop is the one place that
 * can: resumed with a signal its mask blocks, the kernel queues that
 * signal with the siginfo the tracer set (ptrace_signal).  The stop is
 * provoked with tgkill of the same signal while the mask lets only it
 * through; a new instance already pending (a standard signal) is merged,
 * as the kernel merges two pending ones.  An interrupt brings the thread
 * back to a stop before it could return to user space.  0 done, -1 not
 * (the caller falls back on requeue_signal), -2 thread gone. */
/* The thread did not come back to a stop while a kept signal was put
 * back (or memprof is being ended): its registers still lead into the
 * trampoline's rt_sigreturn, so it restores itself once memprof lets go;
 * the trampoline stays, no further call is made, memprof exits. */
static int requeue_abandon(struct remote_stop *s)
{
    s->ctx->must_exit = true;
    refuse_calls(s->ctx, "thread %d of process %d did not stop while memprof gave a "
                 "signal back to it, and was left to restore itself", s->tid, s->ctx->pid);
    s->let_go = true;
    s->tramp_written = false;
    return -2;
}

static int requeue_exact(struct remote_stop *s, int sig, siginfo_t *info)
{
    if (set_sigmask(s->tid, ~sigbit(sig)) < 0 ||
        syscall(SYS_tgkill, s->ctx->pid, s->tid, sig) < 0)
        return -1;
    if (ptrace(PTRACE_CONT, s->tid, 0, 0) < 0)
        return -2;
    int got = 0;
    double deadline = now_s() + STOP_WAIT_S;
    for (;;) {
        enum stop_kind k = wait_stop(s, &got, deadline, false);
        if (k == STOP_TIMEOUT || k == STOP_TERMINAL)
            return requeue_abandon(s);
        if (k == STOP_GONE)
            return -2;
        if (k == STOP_SIGNAL && got == sig)
            break;
        if (k == STOP_SIGNAL)
            keep_signal(s, got);    /* a SIGSTOP sent meanwhile */
        if (ptrace(PTRACE_CONT, s->tid, 0, 0) < 0)
            return -2;
    }
    if (set_sigmask(s->tid, ~(uint64_t)0) < 0 ||
        ptrace(PTRACE_SETSIGINFO, s->tid, 0, info) < 0 ||
        ptrace(PTRACE_INTERRUPT, s->tid, 0, 0) < 0 ||
        ptrace(PTRACE_CONT, s->tid, 0, (void *)(long)sig) < 0)
        return -2;
    int w = wait_interrupt(s, now_s() + STOP_WAIT_S, false);
    if (w == -2)
        return requeue_abandon(s);
    return w < 0 ? -2 : 0;
}

/* Every kept signal back in the queue, in the order kept, with its own
 * siginfo; they wait there, blocked, until release puts the thread's own
 * mask back.  Run while the registers still lead into the trampoline's
 * rt_sigreturn: should memprof die meanwhile, the thread restores its mask
 * from its frame and takes them.  SIGSTOP stays kept: sent again after
 * the detach (requeue_signal), it would stop the thread under memprof. */
static void requeue_kept(struct remote_stop *s)
{
    size_t left = 0;
    /* requeue_exact may keep a SIGSTOP that arrives meanwhile: appended,
     * and seen by this loop. */
    for (size_t i = 0; i < s->npending && !s->gone; i++) {
        int sig = s->pending_sig[i];
        int r = sig == SIGSTOP || sig == SIGKILL ? -3
                                                 : requeue_exact(s, sig, &s->pending_info[i]);
        if (r == -2)
            s->gone = true;
        else if (r == -1)
            requeue_signal(s->ctx->pid, s->tid, sig, &s->pending_info[i]);
        else if (r == -3) {
            s->pending_info[left] = s->pending_info[i];
            s->pending_sig[left++] = sig;
        }
    }
    s->npending = left;
}

bool remote_timeout_less(int64_t *sec, int64_t *sub, int64_t sub_per_sec, int64_t held_ns)
{
    if (*sec < 0 || *sub < 0 || *sub >= sub_per_sec)
        return false;
    int64_t ns_per_sub = 1000000000 / sub_per_sec;
    /* Whole units only: a held time below one unit is not taken off, so
     * the sleep never ends before its time. */
    int64_t held_sub = held_ns / ns_per_sub;
    int64_t held_sec = held_sub / sub_per_sec;
    held_sub %= sub_per_sec;
    if (*sec < held_sec || (*sec == held_sec && *sub <= held_sub)) {
        *sec = *sub = 0;
        return true;
    }
    *sec -= held_sec;
    *sub -= held_sub;
    if (*sub < 0) {
        *sub += sub_per_sec;
        (*sec)--;
    }
    return true;
}

/* A select/pselect6/ppoll the kernel will restart: the timeout it wrote
 * back when the interrupt came is what the restart waits again, from when
 * the thread resumes.  The time memprof held the thread comes off it, so
 * that the call still ends when it would have.  Counted from the stop
 * memprof saw, a little after the kernel wrote the timeout: the sleep ends
 * late by that much (microseconds), never early. */
static void consume_held_time(struct remote_stop *s)
{
    uint64_t addr = 0;
    enum restart_timeout kind = arch_restart_timeout(&s->saved.regs, &addr);
    if (kind == RESTART_TIMEOUT_NONE || !s->stopped_ns)
        return;
    int64_t t[2];
    struct mp_error ignored;
    if (remote_stop_read(s, addr, t, sizeof t, &ignored) < 0 ||
        !remote_timeout_less(&t[0], &t[1],
                             kind == RESTART_TIMEOUT_TIMEVAL ? 1000000 : 1000000000,
                             mono_ns() - s->stopped_ns))
        return;
    remote_stop_write(s, addr, t, sizeof t, &ignored);
}

/* The trampoline is the process's, not the thread's: its bytes go back
 * even when only the thread died (harmless if the process is gone). */
static int put_back_trampoline(struct remote_stop *s, int rc, struct mp_error *err)
{
    struct mp_error werr;
    if (s->tramp_written &&
        remote_stop_write(s, s->ctx->tramp, s->ctx->tramp_orig, s->ctx->tramp_len,
                          &werr) < 0 && !s->gone && rc == 0) {
        *err = werr;
        rc = mp_error_prefix(err, "cannot restore the entry point bytes");
    }
    s->tramp_written = false;
    return rc;
}

/* Undo everything, in reverse, and detach.  in_signal_stop: the thread is
 * in a signal-delivery-stop (after a call), where PTRACE_DETACH can inject
 * the first kept signal with its original siginfo. */
static int release(struct remote_stop *s, bool in_signal_stop, struct mp_error *err)
{
    int rc = 0;
    if (s->let_go)
        return 0;
    if (!in_signal_stop && s->npending > 0 && !s->gone)
        requeue_kept(s);
    if (!s->gone) {
        /* Mask first, registers last, trampoline bytes after the exact
         * registers: until those are set the thread's next instruction
         * may be the trampoline's rt_sigreturn, which must stay intact for
         * as long as it can restore itself from its frame. */
        if (s->mask_changed && set_sigmask(s->tid, s->saved_sigmask) < 0)
            rc = mp_error_set(err, "cannot restore the signal mask of thread %d: %s",
                              s->tid, strerror(errno));
        bool exact = s->have_state && arch_restore(s->tid, &s->saved, err) == 0;
        if (s->have_state && !exact)
            rc = -1;
        if (rc < 0 && thread_died(s))
            rc = gone_error(s, err);
        if (s->have_state)
            consume_held_time(s);
        /* With its registers back the thread needs the trampoline no more:
         * its bytes go back while the thread is still stopped, so that a
         * fork it makes next (which holds the memory map's lock while it
         * copies it) cannot hold up the write. */
        if (exact)
            rc = put_back_trampoline(s, rc, err);
        size_t first = 0;
        int inject = 0;
        if (in_signal_stop && s->npending > 0) {
            ptrace(PTRACE_SETSIGINFO, s->tid, 0, &s->pending_info[0]);
            inject = s->pending_sig[0];
            first = 1;
        }
        if (ptrace(PTRACE_DETACH, s->tid, 0, (void *)(long)inject) < 0) {
            if (errno != ESRCH)
                rc = mp_error_set(err, "cannot detach from thread %d: %s", s->tid,
                                  strerror(errno));
            else
                reap(s);    /* it died meanwhile */
        }
        for (size_t i = first; i < s->npending; i++)
            requeue_signal(s->ctx->pid, s->tid, s->pending_sig[i], &s->pending_info[i]);
    }
    return put_back_trampoline(s, rc, err);
}

/* ---- one attempt on one thread ------------------------------------------ */

/* For the whole stop: the terminal signals and SIGCHLD wake wait_stop
 * (sigtimedwait) instead of running handlers; SIGTSTP waits until the
 * thread is let go. */
static void block_terminal_signals(sigset_t *old)
{
    sigset_t set;
    wait_signals(&set, true);
    sigaddset(&set, SIGTSTP);
    sigprocmask(SIG_BLOCK, &set, old);
}

/* A terminal signal memprof got during the stop acts now, the thread let
 * go: raised while still blocked, it is delivered by the unblocking. */
static void unblock_terminal_signals(struct remote_ctx *ctx, const sigset_t *old)
{
    if (ctx->stop_signal) {
        raise(ctx->stop_signal);
        ctx->stop_signal = 0;
    }
    sigprocmask(SIG_SETMASK, old, NULL);
}

#ifndef PTRACE_O_SUSPEND_SECCOMP
#define PTRACE_O_SUSPEND_SECCOMP (1 << 21)
#endif

static bool thread_seccomp_filtered(pid_t pid, pid_t tid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task/%d/status", pid, tid);
    struct proc_status st;
    return preflight_read_status(path, &st) < 0 || st.seccomp != 0;
}

/* Why PTRACE_SEIZE failed with errno e: an exiting thread (EPERM once it
 * is a zombie), a process that exited or exec'd, or another tracer. */
static enum try_result seize_failed(struct remote_stop *s, int e, struct mp_error *err)
{
    struct remote_ctx *ctx = s->ctx;
    if (fate_error(ctx, "while memprof was attaching to it", false, err) < 0)
        return TRY_FAILED;
    char path[96];
    snprintf(path, sizeof path, "/proc/%d/task/%d/status", ctx->pid, s->tid);
    struct proc_status st;
    if (e == ESRCH || preflight_read_status(path, &st) < 0 || st.state == 'Z' ||
        st.state == 'X')
        return TRY_THREAD_GONE;
    char tracer[96];
    preflight_thread_tracer(ctx->pid, s->tid, tracer, sizeof tracer);
    if (*tracer) {
        mp_error_set(err, "thread %d by %s", s->tid, tracer);
        return TRY_TRACED;
    } else {
        mp_error_set(err, "cannot trace thread %d of process %d: %s", s->tid, ctx->pid,
                     strerror(e));
    }
    return TRY_FAILED;
}

/* TRACESYSGOOD: syscall stops (SIGTRAP|0x80) are told from real SIGTRAPs.
 * TRACEEXEC: a thread that exec's stops there, and is let go untouched.
 * SUSPEND_SECCOMP: memprof skips the trampoline's rt_sigreturn by setting
 * its number to -1 at the entry stop, and the kernel runs the thread's
 * seccomp filter after that stop: an allow-list filter (systemd's
 * SystemCallFilter=, containers) would kill the process for "system call
 * -1".  Suspending needs CAP_SYS_ADMIN; without it a filtered thread is
 * refused, an unfiltered one is fine. */
static enum try_result seize(struct remote_stop *s, struct mp_error *err)
{
    struct remote_ctx *ctx = s->ctx;
    long opts = PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACEEXEC;
    if (!ctx->cannot_suspend_seccomp)
        opts |= PTRACE_O_SUSPEND_SECCOMP;
    int rc = (int)ptrace(PTRACE_SEIZE, s->tid, 0, (void *)opts);
    if (rc < 0 && (opts & PTRACE_O_SUSPEND_SECCOMP) && (errno == EPERM || errno == EINVAL)) {
        opts &= ~(long)PTRACE_O_SUSPEND_SECCOMP;
        rc = (int)ptrace(PTRACE_SEIZE, s->tid, 0, (void *)opts);
        if (rc == 0)
            ctx->cannot_suspend_seccomp = true;
    }
    if (rc < 0)
        return seize_failed(s, errno, err);
    if (!(opts & PTRACE_O_SUSPEND_SECCOMP) && thread_seccomp_filtered(ctx->pid, s->tid)) {
        if (detach_running(s) < 0)
            reap(s);
        s->let_go = true;
        mp_error_set(err, "process %d runs under a seccomp filter, which could kill it "
                     "for the system call memprof skips after each call; memprof "
                     "suspends the filter while it holds a thread, which needs "
                     "CAP_SYS_ADMIN: run memprof as root", ctx->pid);
        return TRY_FAILED;
    }
    return TRY_DONE;
}

/* What wait_interrupt's w says of the thread memprof interrupted. */
static enum try_result interrupt_result(struct remote_stop *s, int w, struct mp_error *err)
{
    struct remote_ctx *ctx = s->ctx;
    s->stopped_ns = mono_ns();
    if (w == -1) {
        reap(s);
        return fate_error(ctx, "while memprof was attaching to it", false, err) < 0
                   ? TRY_FAILED : TRY_THREAD_GONE;
    }
    if (w == -2) {
        char waits[200];
        describe_wait(ctx->pid, s->tid, waits, sizeof waits);
        ctx->must_exit = true;
        s->let_go = true;
        refuse_calls(ctx, "thread %d of process %d did not stop when memprof "
                     "interrupted it: memprof makes no further call in this session",
                     s->tid, ctx->pid);
        mp_error_set(err, "thread %d of process %d did not stop within %.1f s of "
                     "memprof's interrupt (it is %s); memprof changed nothing in it "
                     "and must exit to let the kernel release it", s->tid, ctx->pid,
                     ctx->stop_signal ? SIGNALLED_WAIT_S : STOP_WAIT_S, waits);
        return TRY_FAILED;
    }
    if (w > 0) {
        mp_error_set(err, "process %d was stopped (SIGSTOP/SIGTSTP) while memprof "
                     "attached; resume it with `kill -CONT %d`", s->ctx->pid, s->ctx->pid);
        return TRY_FAILED;
    }
    return TRY_DONE;
}

/* Stop the seized thread; 0 stopped, else why not. */
static enum try_result interrupt(struct remote_stop *s, struct mp_error *err)
{
    int w = ptrace(PTRACE_INTERRUPT, s->tid, 0, 0) < 0 ? -1
                : wait_interrupt(s, now_s() + STOP_WAIT_S, true);
    return interrupt_result(s, w, err);
}

/* 0 when the self-restore frame can re-enter the thread's interrupted
 * system call the way the kernel would (a system call instruction at
 * arch_restart_pc), 1 when not (why set). */
static int check_restart_insn(struct remote_stop *s, char *why, size_t whylen)
{
    uint64_t pc = arch_restart_pc(&s->saved.regs);
    uint8_t code[ARCH_SYSCALL_INSN_LEN];
    struct mp_error ignored;
    if (!pc)
        return 0;
    if (remote_read(s->ctx->pid, pc, code, sizeof code, &ignored) == 0 &&
        arch_is_syscall_insn(code))
        return 0;
    snprintf(why, whylen, "no system call instruction at %#llx to restart",
             (unsigned long long)pc);
    return 1;
}

/* The number the self-restore frame re-issues a restart-block call as: the
 * call's own when the registers show it, and remembered for the thread;
 * when they show restart_syscall continuing one, the remembered number if
 * the thread, instruction and arguments match, else -1 (EINTR). */
static struct restart_memo *restart_memo_of(struct remote_ctx *ctx, pid_t tid)
{
    for (size_t i = 0; i < RESTART_MEMO_SLOTS; i++)
        if (ctx->restart_memo[i].tid == tid)
            return &ctx->restart_memo[i];
    return NULL;
}

static void remember_restart(struct remote_ctx *ctx, pid_t tid, const struct arch_syscall *call)
{
    struct restart_memo *memo = restart_memo_of(ctx, tid);
    if (!memo)
        memo = &ctx->restart_memo[ctx->restart_memo_next++ % RESTART_MEMO_SLOTS];
    *memo = (struct restart_memo){ .tid = tid, .call = *call };
}

long remote_reissue_nr(struct remote_ctx *ctx, pid_t tid, const struct arch_regs *regs)
{
    struct arch_syscall call;
    enum restart_block kind = arch_restart_block(regs, &call);
    if (kind == RESTART_BLOCK_NONE)
        return -1;
    if (kind == RESTART_BLOCK_CALL) {
        remember_restart(ctx, tid, &call);
        return call.nr;
    }
    struct restart_memo *memo = restart_memo_of(ctx, tid);
    if (memo && memo->call.pc == call.pc &&
        memcmp(memo->call.args, call.args, sizeof call.args) == 0)
        return memo->call.nr;
    return -1;
}

/* The frame the thread restores itself from if memprof dies: written
 * before anything redirects it, below its red zone, with enough stack
 * left under it for the calls. */
static enum try_result write_frame(struct remote_stop *s, char *why, size_t whylen,
                                   struct mp_error *err)
{
    if (check_restart_insn(s, why, whylen))
        return TRY_UNSAFE;
    long nr = remote_reissue_nr(s->ctx, s->tid, &s->saved.regs);
    uint64_t tramp = arch_frame_adds_syscall(&s->saved.regs) &&
                             thread_seccomp_filtered(s->ctx->pid, s->tid) ? 0 : s->ctx->tramp;
    if (arch_frame_build(&s->saved, s->saved_sigmask, remote_call_sigmask(s->saved_sigmask),
                         nr, tramp, &s->frame, err) < 0)
        return TRY_FAILED;
    if (s->stack_low && s->frame.low - s->stack_low < MIN_HEADROOM) {
        snprintf(why, whylen, "too little stack below its signal frame");
        return TRY_UNSAFE;
    }
    if (remote_stop_write(s, s->frame.base, s->frame.img, s->frame.len, err) < 0)
        return TRY_FAILED;
    return TRY_DONE;
}

/* The stopped thread died before anything was changed: another one may
 * do, unless the process itself exited or exec'd. */
static enum try_result died_before_call(struct remote_stop *s, struct mp_error *err)
{
    reap(s);
    return fate_error(s->ctx, "while memprof was attaching to it", true, err) < 0
               ? TRY_FAILED : TRY_THREAD_GONE;
}

/* arm64 (arch_restart_hidden): let the thread run to its `svc`'s entry
 * stop, where the kernel's restart decision shows, skip the call there
 * and stop the thread again by interrupt with the registers it had, but
 * restart_syscall in x8 if that was the decision: an exact restore then
 * goes on with the call as the kernel would (a sleep keeps its end, where
 * re-issuing it would wait its whole time again), and the memo keeps the
 * original for the self-restore frame.  A signal that comes first is
 * delivered as without memprof (its handler gets EINTR or the restart the
 * kernel decides) and the thread stops at the handler.  The state is
 * saved again at the new stop. */
static enum try_result reveal_restart(struct remote_stop *s, struct mp_error *err)
{
    int sig = 0;
    enum stop_kind k = STOP_OTHER;
    double deadline = now_s() + STOP_WAIT_S;
    while (k == STOP_OTHER || k == STOP_INTERRUPT) {
        if (ptrace(PTRACE_SYSCALL, s->tid, 0, 0) < 0)
            return interrupt_result(s, -1, err);
        k = wait_stop(s, &sig, deadline, false);
    }
    if (k == STOP_GONE || k == STOP_TIMEOUT || k == STOP_TERMINAL || k == STOP_GROUP)
        return interrupt_result(s, k == STOP_GONE ? -1 : k == STOP_GROUP ? 1 : -2, err);
    if (k == STOP_SIGNAL && sig == SIGSTOP) {
        keep_signal(s, sig);    /* as wait_interrupt keeps it */
        sig = 0;
    }
    if (k == STOP_SYSCALL) {
        sig = 0;
        struct arch_regs at;
        struct arch_syscall call;
        if (arch_get_regs(s->tid, &at, err) < 0)
            return thread_died(s) ? died_before_call(s, err) : TRY_FAILED;
        if (arch_restart_seen(&s->saved.regs, &at, &call))
            remember_restart(s->ctx, s->tid, &call);
        if (arch_set_regs(s->tid, &s->saved.regs, err) < 0) {
            /* half written: the entry as it was, so that it makes the call */
            struct mp_error ignored;
            arch_set_regs(s->tid, &at, &ignored);
            return thread_died(s) ? died_before_call(s, err) : TRY_FAILED;
        }
    }
    int w = ptrace(PTRACE_INTERRUPT, s->tid, 0, 0) < 0 ||
                    ptrace(PTRACE_CONT, s->tid, 0, (void *)(long)sig) < 0
                ? -1 : wait_interrupt(s, now_s() + STOP_WAIT_S, true);
    enum try_result r = interrupt_result(s, w, err);
    if (r != TRY_DONE)
        return r;
    arch_state_free(&s->saved);
    if (arch_save(s->tid, &s->saved, err) < 0)
        return thread_died(s) ? died_before_call(s, err) : TRY_FAILED;
    return TRY_DONE;
}

static enum try_result prepare(struct remote_stop *s, char *why, size_t whylen,
                               struct mp_error *err)
{
    if (arch_save(s->tid, &s->saved, err) < 0)
        return thread_died(s) ? died_before_call(s, err) : TRY_FAILED;
    if (arch_restart_hidden(&s->saved.regs)) {
        enum try_result r = reveal_restart(s, err);
        if (r != TRY_DONE)
            return r;
    }
    s->have_state = true;
    if (ptrace(PTRACE_GETSIGMASK, s->tid, sizeof s->saved_sigmask, &s->saved_sigmask) < 0) {
        mp_error_set(err, "cannot read the signal mask of thread %d: %s", s->tid,
                     strerror(errno));
        return thread_died(s) ? died_before_call(s, err) : TRY_FAILED;
    }
    if (check_thread(s, why, whylen))
        return TRY_UNSAFE;
    enum try_result r = write_frame(s, why, whylen, err);
    if (r != TRY_DONE)
        return r;
    return TRY_DONE;
}

/* Phases of one stop, for MEMPROF_TRACE_PAUSES. */
enum phase { PH_START, PH_STOPPED, PH_CHECKED, PH_BODY, PH_END, PH_COUNT };

static void trace_stop(const struct remote_stop *s, double *t, enum try_result r,
                       const char *why, const char *prio)
{
    FILE *f = s->ctx->trace;
    if (f && r == TRY_TRACED)
        fprintf(f, "skip tid=%d (%s)\n", (int)s->tid, why);
    if (!f || t[PH_START] == 0)
        return;
    for (int i = PH_STOPPED; i < PH_COUNT; i++)  /* a phase skipped took no time */
        if (t[i] == 0)
            t[i] = t[i - 1];
    fprintf(f, "pause tid=%d us=%.1f calls=%u stop=%.1f check=%.1f body=%.1f "
            "release=%.1f prio=%s%s%s%s\n", (int)s->tid, t[PH_END] - t[PH_START], s->ncalls,
            t[PH_STOPPED] - t[PH_START], t[PH_CHECKED] - t[PH_STOPPED],
            t[PH_BODY] - t[PH_CHECKED], t[PH_END] - t[PH_BODY], prio,
            r == TRY_UNSAFE ? " refused (" : "", r == TRY_UNSAFE ? why : "",
            r == TRY_UNSAFE ? ")" : "");
}

/* Run the body on the stopped, checked thread and let it go. */
static void run_body(struct remote_stop *s, remote_body_fn body, void *arg, int *body_rc,
                     double *t, struct mp_error *err)
{
    *body_rc = body(s, arg, err);
    t[PH_BODY] = now_us();
    struct mp_error rel;
    mp_error_clear(&rel);
    if (s->at_sigreturn && leave_sigreturn(s, &rel) < 0 && *body_rc == 0) {
        *err = rel;
        *body_rc = -1;
    }
    if (release(s, s->at_signal_stop, &rel) < 0 && *body_rc == 0) {
        *err = rel;
        *body_rc = -1;
    }
}

/* The thread tid last ran on cpu (-1: unknown).  memprof's own priority
 * is raised for the stop (stop_priority.h) once its terminal signals are
 * blocked, and put back before any of them can act. */
static enum try_result try_thread(struct remote_ctx *ctx, pid_t tid, int cpu,
                                  remote_body_fn body, void *arg,
                                  struct remote_report *rep, char *why, size_t whylen,
                                  int *body_rc, struct mp_error *err)
{
    struct remote_stop s = { .ctx = ctx, .tid = tid };
    double t[PH_COUNT] = { 0 };
    char prio[48] = "";
    sigset_t old;
    block_terminal_signals(&old);
    stop_priority_raise(&ctx->prio, cpu);
    if (ctx->trace)
        stop_priority_describe_self(prio, sizeof prio);
    enum try_result r = seize(&s, err);
    if (r == TRY_DONE) {
        t[PH_START] = now_us();
        r = interrupt(&s, err);
        t[PH_STOPPED] = now_us();
        if (r == TRY_DONE)
            r = prepare(&s, why, whylen, err);
        t[PH_CHECKED] = now_us();
        if (r == TRY_DONE) {
            run_body(&s, body, arg, body_rc, t, err);
        } else if (!s.gone) {
            struct mp_error ignored;
            release(&s, false, &ignored);
        }
        t[PH_END] = now_us();
    }
    rep->pause_us = t[PH_END] - t[PH_START];
    rep->tid = tid;
    if (r == TRY_TRACED)
        snprintf(why, whylen, "traced: %.200s", err->msg);
    stop_priority_restore(&ctx->prio);
    trace_stop(&s, t, r, why, prio);
    arch_state_free(&s.saved);
    arch_frame_free(&s.frame);
    unblock_terminal_signals(ctx, &old);
    return r;
}

/* Threads another tracer holds, named for the refusal when no other is
 * left: "thread 5388 by process 5393 (strace), ...". */
struct traced_list {
    char text[512];
    size_t n;
};

static void traced_add(struct traced_list *l, const char *one)
{
    size_t used = strlen(l->text);
    if (strstr(l->text, one) == NULL && used + strlen(one) + 3 < sizeof l->text)
        snprintf(l->text + used, sizeof l->text - used, "%s%s", used ? ", " : "", one);
    l->n++;
}

/* Keep only ctx->only_tid among the candidates; -1 (err) when it is gone. */
static int only_thread(struct remote_ctx *ctx, struct thread_info *threads, size_t *n,
                       struct mp_error *err)
{
    for (size_t i = 0; i < *n; i++)
        if (threads[i].tid == ctx->only_tid) {
            threads[0] = threads[i];
            *n = 1;
            return 0;
        }
    return mp_error_set(err, "thread %d of process %d has exited", ctx->only_tid, ctx->pid);
}

int remote_session(struct remote_ctx *ctx, remote_body_fn body, void *arg,
                   struct remote_report *rep, struct mp_error *err)
{
    memset(rep, 0, sizeof *rep);
    char why[256] = "";
    pid_t last_tid = 0;
    struct traced_list traced = { "", 0 };
    if (ctx->no_calls[0])
        return mp_error_set(err, "%s", ctx->no_calls);
    if (ctx->unwind)
        unwind_checker_recheck(ctx->unwind);
    for (int round = 0; round < MAX_ROUNDS; round++) {
        struct thread_info *threads;
        size_t n, tried = 0, traced_now = 0;
        if (proc_fate(ctx->pid, ctx->mem_fd, ctx->start_time) != PROC_SAME &&
            fate_error(ctx, "since memprof attached to it", false, err) < 0)
            return -1;
        if (threads_list(ctx->pid, &threads, &n, err) < 0)
            return -1;
        if (ctx->only_tid && only_thread(ctx, threads, &n, err) < 0) {
            free(threads);
            return -1;
        }
        /* a traced thread does not take a candidate's place */
        for (size_t i = 0; i < n && tried - traced_now < THREADS_CANDIDATES; i++) {
            int body_rc = -1;
            unsigned retries = rep->unsafe_retries;
            enum try_result r = try_thread(ctx, threads[i].tid, threads[i].cpu, body, arg,
                                           rep, why, sizeof why, &body_rc, err);
            rep->unsafe_retries = retries;
            if (r != TRY_THREAD_GONE)
                tried++;
            if (r == TRY_TRACED) {
                traced_add(&traced, err->msg);
                traced_now++;
                continue;
            }
            if (r == TRY_UNSAFE) {
                rep->unsafe_retries++;
                last_tid = threads[i].tid;
                continue;
            }
            if (r == TRY_THREAD_GONE && !ctx->must_exit)
                continue;
            if (r == TRY_THREAD_GONE)
                mp_error_set(err, "thread %d of process %d exited and could not be "
                             "waited for", threads[i].tid, ctx->pid);
            free(threads);
            return r == TRY_DONE ? body_rc : -1;
        }
        free(threads);
        if (tried && traced_now == tried)
            return mp_error_set(err, "every thread of process %d memprof could borrow "
                                "is traced by another tracer (%s): a thread can have "
                                "only one tracer; detach it from some threads and retry",
                                ctx->pid, traced.text);
        struct timespec ts = { 0, ROUND_SLEEP_NS };
        nanosleep(&ts, NULL);
    }
    if (!last_tid && traced.n)
        return mp_error_set(err, "no thread of process %d could be stopped: those memprof "
                            "tried are traced by another tracer (%s); detach it from "
                            "some threads and retry", ctx->pid, traced.text);
    return mp_error_set(err, "no thread of process %d could be stopped safely in %d "
                        "attempts (last: thread %d was %s%s%s); it is probably busy in "
                        "its allocator: try again", ctx->pid, rep->unsafe_retries,
                        last_tid, why, traced.n ? "; others are traced by another "
                        "tracer: " : "", traced.text);
}
