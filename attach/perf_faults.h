/* perf_faults.h - a process's page faults sampled by the kernel:
 * perf_event_open(PERF_COUNT_SW_PAGE_FAULTS) on each of its threads and
 * CPUs (new threads inherit the events), one ring buffer per CPU, read
 * while the process runs.  No ptrace stop, nothing written into the process:
 * the kernel copies each sample's registers and a few KiB of the
 * thread's stack (docs/design.md; the stacks are walked offline by
 * session/faults.c).
 *
 * The kernel lets memprof do this for a process it may ptrace-read
 * (PTRACE_MODE_READ_REALCREDS) at perf_event_paranoid <= 2, or with
 * CAP_PERFMON: a refusal says which of them is missing and what to do. */
#ifndef MEMPROF_PERF_FAULTS_H
#define MEMPROF_PERF_FAULTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/base/error.h"
#include "lib/proc/perf_record.h"

/* Threads followed at most, and events (one per thread and CPU, a
 * descriptor each) opened at most. */
#define PERF_FAULTS_MAX_THREADS 4096u
#define PERF_FAULTS_MAX_EVENTS  16384u
/* Bytes of user stack the kernel copies per sample (as perf's default). */
#define PERF_FAULTS_STACK_BYTES 8192u

struct perf_faults_options {
    uint64_t period;        /* a sample every `period` faults; 0: by frequency */
    unsigned freq;          /* samples per second per thread when period is 0 */
};

struct perf_faults_counts {
    unsigned threads;           /* events opened (threads followed from the start) */
    bool kernel_excluded;       /* faults taken in the kernel for the process
                                * (read() into new pages...) not counted: the
                                * kernel allows them only with CAP_PERFMON or
                                * perf_event_paranoid <= 1 */
    size_t ring_bytes;          /* ring-buffer memory, all threads */
    uint64_t samples, lost, throttled, malformed;
};

struct perf_faults;

/* Start sampling process pid's faults.  NULL with err set (marked
 * MP_ERROR_DENIED when the kernel refuses, saying why and what to do). */
struct perf_faults *perf_faults_open(pid_t pid, const struct perf_faults_options *o,
                                     struct mp_error *err);

/* Read every ring buffer, each sample to fn; waits at most timeout_ms for
 * one to fill (0: does not wait). */
typedef void perf_faults_fn(void *ctx, const struct perf_fault_sample *s);
void perf_faults_read(struct perf_faults *pf, int timeout_ms, perf_faults_fn *fn,
                      void *ctx);

const struct perf_faults_counts *perf_faults_counts(const struct perf_faults *pf);

/* Stop: the events closed, the buffers unmapped (the process keeps nothing). */
void perf_faults_close(struct perf_faults *pf);

#endif
