/* perf_record.h - one record of a perf_event_open ring buffer, as memprof's
 * page-fault sampler asks for them (attach/perf_faults.c): a sample with
 * PERF_SAMPLE_IP | TID | ADDR | PERIOD | REGS_USER | STACK_USER, a lost
 * record, or one of another type (skipped).
 *
 * The record's layout comes from the kernel, but the copied stack holds
 * whatever the process had in its memory, and a record cut or garbled
 * (a ring read wrong) must not be followed: every length is checked
 * against the record's own size, and the stack is only pointed at, never
 * trusted (lib/elf/cfi_walk.c bounds every read of it). */
#ifndef MEMPROF_PERF_RECORD_H
#define MEMPROF_PERF_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The sample fields memprof asks for, in the kernel's bit order (the
 * record holds them in this order); PERIOD only when sampling by
 * frequency: a software event with a fixed period and PERIOD asked for
 * samples every single fault (the kernel's perf_swevent_event). */
#define PERF_RECORD_FAULT_SAMPLE_TYPE \
    ((1u << 0) | (1u << 1) | (1u << 3) | (1u << 12) | (1u << 13))
#define PERF_RECORD_FAULT_PERIOD (1u << 8)

/* The user registers memprof asks for are three, and the architecture's
 * mask (attach/arch) lists them so that they arrive as frame pointer,
 * stack pointer, program counter: on x86_64 BP(6) SP(7) IP(8), on aarch64
 * X29(29) SP(31) PC(32). */
#define PERF_RECORD_USER_REGS 3u

enum perf_record_kind {
    PERF_RECORD_KIND_BAD = -1,     /* malformed: its sizes do not add up */
    PERF_RECORD_KIND_OTHER = 0,    /* a type memprof does not read */
    PERF_RECORD_KIND_SAMPLE,
    PERF_RECORD_KIND_LOST,         /* the ring was full: `lost` samples dropped */
    PERF_RECORD_KIND_THROTTLE,     /* the kernel throttled the event */
};

struct perf_fault_sample {
    uint64_t ip;                   /* where the fault was taken (kernel or user) */
    bool kernel;                   /* ip is in the kernel (a fault on the
                                    * process's behalf, e.g. read() into a new page) */
    uint32_t pid, tid;
    uint64_t addr;                 /* the faulting address */
    uint64_t period;               /* faults this sample stands for (0: not
                                    * in the record, the event's fixed period) */
    bool has_regs;                 /* the user registers were given (abi != 0) */
    uint64_t fp, sp, pc;           /* the user registers */
    const uint8_t *stack;          /* the user stack from sp up, copied by the
                                    * kernel from the process: untrusted */
    size_t stack_len;              /* bytes of it that are valid (dyn_size) */
};

struct perf_record {
    enum perf_record_kind kind;
    struct perf_fault_sample sample;   /* kind SAMPLE */
    uint64_t lost;                     /* kind LOST */
};

/* Read one whole record (header included) of len bytes; len is what the
 * header said and the caller copied; with_period: the samples hold
 * PERF_SAMPLE_PERIOD.  Never reads outside [rec, rec+len). */
enum perf_record_kind perf_record_parse(const uint8_t *rec, size_t len, bool with_period,
                                        struct perf_record *out);

#endif
